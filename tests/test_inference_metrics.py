"""Entropy, effective number of options, MI, temperature fitting (seed's rule) and ECE."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from inference import metrics as M

EXPMRC = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_uniform_and_certain_distributions(k):
    uniform = np.full(k, 1 / k)
    assert math.isclose(M.entropy_bits(uniform), math.log2(k), abs_tol=1e-12)
    assert math.isclose(M.effective_options(uniform), k, rel_tol=1e-12)
    certain = np.eye(k)[0]
    assert M.entropy_bits(certain) == 0.0 and M.effective_options(certain) == 1.0


def test_entropy_and_mi_by_hand():
    shortcut = np.array([[0.5, 0.25, 0.125, 0.125]])  # 1.75 bits
    standard = np.array([[0.5, 0.5, 0.0, 0.0]])  # 1 bit
    assert math.isclose(M.entropy_bits(shortcut)[0], 1.75)
    assert math.isclose(M.effective_options(shortcut)[0], 2 ** 1.75)
    # context removed 0.75 bits of uncertainty: positive MI
    assert math.isclose(M.mutual_information(shortcut, standard)[0], 0.75)
    # the reverse (context made the model less sure) is negative, in the same units
    assert math.isclose(M.mutual_information(standard, shortcut)[0], -0.75)


def test_softmax_masks_padding_options_and_rejects_bad_temperature():
    p = M.softmax(M.masked([[1.0, 2.0, 0.0]], [[True, True, False]]))
    assert p[0, 2] == 0.0 and math.isclose(p[0].sum(), 1.0)
    with pytest.raises(ValueError):
        M.softmax([[1.0, 2.0]], 0)


def _overlap_logits():
    """A real, weak predictor: word overlap of each alternative with the passage."""
    words = lambda t: set(re.findall(r"[a-z']+", t.lower()))
    logits, labels = [], []
    for p in json.loads(EXPMRC.read_text(encoding="utf-8"))["data"]:
        pw = words(p["article"])
        for opts, ans in zip(p["options"], p["answers"]):
            if len(opts) != 4:
                continue
            logits.append([len(words(o) & pw) / max(1, len(words(o))) * 5 for o in opts])
            labels.append("ABCD".index(ans))
    return np.array(logits), np.array(labels)


def test_temperature_meets_the_seed_rule_on_real_items():
    logits, labels = _overlap_logits()
    acc = M.accuracy(logits, labels)
    assert 0.25 < acc < 0.9
    t = M.fit_temperature(logits, labels)
    assert M.T_MIN < t < M.T_MAX
    probs = M.softmax(logits, t)
    # accuracy equals mean maximum probability, and the predictions do not change
    assert math.isclose(probs.max(axis=1).mean(), acc, abs_tol=1e-6)
    assert (probs.argmax(1) == M.softmax(logits).argmax(1)).all()
    # calibration by this rule lowers the expected calibration error here
    assert M.expected_calibration_error(probs, labels) <= M.expected_calibration_error(M.softmax(logits), labels)


def test_temperature_at_chance_hits_the_bound():
    logits = np.array([[0.0, 5.0], [0.0, 5.0]])
    assert M.fit_temperature(logits, np.array([0, 1])) == M.T_MAX  # accuracy 0.5 = uniform
    assert M.fit_temperature(logits, np.array([1, 1])) == M.T_MIN  # always right: sharpen fully


def test_expected_calibration_error_by_hand():
    # bin (0.8, 0.9]: 4 items at 0.9 confidence, 2 right -> |0.5 - 0.9| = 0.4, weight 4/6
    # bin (0.5, 0.6]: 2 items at 0.6 confidence, 2 right -> |1.0 - 0.6| = 0.4, weight 2/6
    probs = np.array([[0.9, 0.1]] * 4 + [[0.6, 0.4]] * 2)
    labels = np.array([0, 0, 1, 1, 0, 0])
    assert math.isclose(M.expected_calibration_error(probs, labels), 0.4, abs_tol=1e-12)
