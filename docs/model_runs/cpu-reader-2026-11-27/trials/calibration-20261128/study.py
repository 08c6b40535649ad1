"""Would another temperature rule, chosen on RACE dev, bring the shortcut's ECE on RACE test to <= 3%?

    python docs/model_runs/cpu-reader-2026-11-27/trials/calibration-20261128/study.py > result.json

Logits: the product's int8x2 rows of the shipped files on RACE dev and test at 384 tokens
(`../../eval/int8x2_race-{dev,test}_384.jsonl.gz`).  Rules, each fitted on dev only: the seed's
(mean max probability = accuracy; the product's rule), the NLL minimum, the ECE minimum; and, for
scale only, the temperature that would minimise test's ECE (an oracle, not a rule).
"""
import gzip
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[5]
sys.path.insert(0, str(ROOT))
from inference.metrics import expected_calibration_error as ece, fit_temperature  # noqa: E402

EVAL = ROOT / "docs" / "model_runs" / "cpu-reader-2026-11-27" / "eval"


def load(name, fmt):
    rows = [json.loads(line) for line in gzip.open(EVAL / name, "rt")]
    rows = [r for r in rows if r["format"] == fmt]
    return np.array([r["logits"] for r in rows]), np.array([r["key"] for r in rows])


def softmax(z, t):
    z = z / t
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def nll(z, y, t):
    return float(-np.log(softmax(z, t)[np.arange(len(y)), y]).mean())


grid = np.exp(np.linspace(np.log(0.5), np.log(3.0), 400))
out = {}
for fmt in ("standard", "shortcut"):
    zd, yd = load("int8x2_race-dev_384.jsonl.gz", fmt)
    zt, yt = load("int8x2_race-test_384.jsonl.gz", fmt)
    rules = {"seed (mean max probability = accuracy)": fit_temperature(zd, yd),
             "NLL minimum": float(grid[np.argmin([nll(zd, yd, t) for t in grid])]),
             "ECE minimum": float(grid[np.argmin([ece(softmax(zd, t), yd) for t in grid])]),
             "oracle on test (not a rule)": float(grid[np.argmin([ece(softmax(zt, t), yt) for t in grid])])}
    out[fmt] = {"dev_questions": len(yd), "test_questions": len(yt),
                "accuracy": {"dev": float((zd.argmax(1) == yd).mean()), "test": float((zt.argmax(1) == yt).mean())},
                "rules": {k: {"T": round(t, 4), "ece_dev": round(ece(softmax(zd, t), yd), 4),
                              "ece_test": round(ece(softmax(zt, t), yt), 4)} for k, t in rules.items()}}
print(json.dumps(out, indent=1))
