"""The World Knowledge seed's measures, and calibration.

* entropy H(Y) = −Σ p log2 p, in bits (0 log 0 = 0)
* effective number of options N(Y) = 2^H, between 1 and the number of alternatives
* contextual mutual information I(Y; C | Q, {O}) = H(shortcut) − H(standard), in bits;
  negative values happen (the models only approximate the true distributions)
* temperature: softmax(logits / T), T chosen so that the mean maximum probability equals
  the accuracy (the seed's rule, Appendix B.3); T does not change the prediction
* expected calibration error over equal-width confidence bins

Logits of padding options are −inf (see `masked`); every function here accepts them.
"""
from __future__ import annotations

import math

import numpy as np


def masked(logits: np.ndarray, option_mask: np.ndarray | None) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    return logits if option_mask is None else np.where(option_mask, logits, -np.inf)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Softmax over the last axis after dividing by T; −inf logits get probability 0."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def entropy_bits(probs: np.ndarray) -> np.ndarray:
    """H = −Σ p log2 p over the last axis."""
    p = np.asarray(probs, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return np.maximum(terms.sum(axis=-1), 0.0)


def effective_options(probs: np.ndarray) -> np.ndarray:
    """N = 2^H: 1 for a certain model, the number of alternatives for a uniform one."""
    return np.power(2.0, entropy_bits(probs))


def mutual_information(probs_shortcut: np.ndarray, probs_standard: np.ndarray) -> np.ndarray:
    """I(Y; C | Q, {O}) ≈ H(shortcut) − H(standard), in bits."""
    return entropy_bits(probs_shortcut) - entropy_bits(probs_standard)


def accuracy(probs_or_logits: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(np.argmax(probs_or_logits, axis=-1) == np.asarray(labels)))


def mean_max_probability(logits: np.ndarray, temperature: float) -> float:
    return float(np.mean(np.max(softmax(logits, temperature), axis=-1)))


T_MIN, T_MAX = 1e-2, 1e3


def fit_temperature(logits: np.ndarray, labels: np.ndarray, option_mask: np.ndarray | None = None) -> float:
    """T such that mean max softmax(logits / T) equals accuracy (bisection on log T).

    Mean maximum probability falls monotonically from 1 (T → 0) to the mean of 1/K
    (T → ∞), so the root is unique when the accuracy lies between them; otherwise the
    nearer bound of [0.01, 1000] is returned (e.g. accuracy at or below chance).
    """
    z = masked(logits, option_mask)
    labels = np.asarray(labels)
    if z.ndim != 2 or len(z) != len(labels) or len(z) == 0:
        raise ValueError("logits must be [questions, options] with one label per question")
    acc = accuracy(z, labels)
    lo, hi = math.log(T_MIN), math.log(T_MAX)
    if mean_max_probability(z, T_MAX) >= acc:
        return T_MAX
    if mean_max_probability(z, T_MIN) <= acc:
        return T_MIN
    for _ in range(100):
        mid = (lo + hi) / 2
        if mean_max_probability(z, math.exp(mid)) > acc:
            lo = mid  # still overconfident: soften more
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return float(math.exp((lo + hi) / 2))


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """Σ_b (n_b / n) |accuracy_b − confidence_b| over equal-width bins of max probability."""
    probs = np.asarray(probs, dtype=np.float64)
    conf = probs.max(axis=-1)
    correct = (probs.argmax(axis=-1) == np.asarray(labels)).astype(np.float64)
    # bin b holds (b/bins, (b+1)/bins]; a confidence of exactly 0 cannot occur
    idx = np.clip(np.ceil(conf * bins).astype(int) - 1, 0, bins - 1)
    ece = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            ece += sel.mean() * abs(correct[sel].mean() - conf[sel].mean())
    return float(ece)
