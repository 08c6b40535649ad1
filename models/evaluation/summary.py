"""The build's evaluation figures from logit rows (numpy only).

`summarise` (numpy only) takes logit rows `{id, source, level, format, key, logits}` of
dev and of the evaluation records and gives, per format:

* the temperature fitted on dev by the seed's rule (accuracy = mean max probability);
* accuracy with a 95% Wilson interval on RACE test (high, middle, all), ExpMRC RACE+ dev,
  EMBRACE green + yellow, DREAM dev and QuAIL dev;
* ECE (10 bins) before and after the temperature on every set;
* on RACE test, the seed's human-study measure: how many questions the shortcut system
  answers with N < 2 (after its temperature), and its accuracy on them.

A trained checkpoint's rows come from `models.evaluation.checkpoint_eval`; the shipped files'
from `models.evaluation.product_eval`, `recipe_eval` and `float_eval`.
"""
from __future__ import annotations

import math

import numpy as np

from inference.metrics import entropy_bits, expected_calibration_error, fit_temperature, softmax

SETS = ("race-test-high", "race-test-middle", "race-test", "expmrc", "embrace", "dream", "quail")
N_SHORTCUT_MAX = 2.0


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson 95% interval of k right of n: the one interval of the report and the GPU evaluation."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def set_of(row: dict) -> list[str]:
    """The evaluation sets a row belongs to (RACE test rows: their level's and the whole test set)."""
    src = row.get("source") or row["id"].split(":", 1)[0]
    if src == "race":
        return [f"race-test-{row.get('level', '')}", "race-test"]
    return [src]


def logit_arrays(rows: list[dict]):
    """The rows' logits as one array (short rows padded with -inf) and their keys."""
    width = max(len(r["logits"]) for r in rows)
    z = np.full((len(rows), width), -np.inf)
    for i, r in enumerate(rows):
        z[i, : len(r["logits"])] = r["logits"]
    return z, np.array([r["key"] for r in rows])


def _probs(z: np.ndarray, t: float) -> np.ndarray:
    return softmax(z, t)


def summarise(dev_rows: list[dict], eval_rows: list[dict]) -> dict:
    out: dict = {"formats": {}}
    formats = sorted({r["format"] for r in eval_rows})
    for fmt in formats:
        dz, dk = logit_arrays([r for r in dev_rows if r["format"] == fmt])
        t = fit_temperature(np.where(np.isfinite(dz), dz, -1e9), dk)
        res: dict = {"temperature": t, "dev_accuracy": float((dz.argmax(1) == dk).mean()), "sets": {}}
        by_set: dict[str, list[dict]] = {}
        for r in eval_rows:
            if r["format"] == fmt:
                for s in set_of(r):
                    by_set.setdefault(s, []).append(r)
        for s in SETS:
            rows = by_set.get(s)
            if not rows:
                continue
            z, k = logit_arrays(rows)
            right = int((z.argmax(1) == k).sum())
            lo, hi = wilson(right, len(rows))
            res["sets"][s] = {"n": len(rows), "accuracy": right / len(rows), "ci95": [lo, hi],
                              "ece_before": expected_calibration_error(_probs(z, 1.0), k),
                              "ece_after": expected_calibration_error(_probs(z, t), k)}
        if fmt == "shortcut" and by_set.get("race-test"):
            z, k = logit_arrays(by_set["race-test"])
            p = _probs(z, t)
            n_eff = 2.0 ** entropy_bits(p)
            low = n_eff < N_SHORTCUT_MAX
            res["shortcut_n_below_2"] = {"n": int(low.sum()),
                                         "accuracy": float((p.argmax(1)[low] == k[low]).mean()) if low.any() else None}
        out["formats"][fmt] = res
    return out
