"""docs/models.md is regenerated from the repository's files, and its numbers are the files' numbers."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from models import report

ROOT = Path(__file__).resolve().parents[1]


def test_wilson_interval_matches_the_closed_form():
    # Wilson (1927) score interval for 0 of 10 has lower bound 0 and upper z²/(n+z²)
    lo, hi = report.wilson(0, 10)
    z = 1.959964
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(z * z / (10 + z * z))
    # the textbook value for 50 of 100: [0.4038, 0.5962]
    lo, hi = report.wilson(50, 100)
    assert (lo, hi) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))


def test_report_numbers_are_the_out_of_fold_accuracies():
    res = report.compute(ROOT / "models" / "default", ROOT / "docs" / "model_runs" / "default")
    rows = {}
    for line in open(ROOT / "models" / "default" / "oof_predictions.jsonl"):
        r = json.loads(line)
        rows.setdefault((r["id"].split(":")[0], r["format"]), []).append(r)
    for (src, fmt), rs in rows.items():
        acc = 100 * np.mean([int(np.argmax(r["logits"]) == r["key"]) for r in rs])
        assert res["acc"][(src, fmt)][1] == pytest.approx(acc, abs=0.05)
    assert res["n"]["expmrc"] == 561 and res["n"]["embrace"] == 1165
    mi = np.concatenate([res["items"][s]["mi"] for s in ("expmrc", "embrace")])
    assert len(mi) == 1726 and np.all(np.isfinite(mi)) and np.all(np.abs(mi) <= 2.0)


def test_figures_are_drawn(tmp_path):
    res = report.compute(ROOT / "models" / "default", ROOT / "docs" / "model_runs" / "default")
    report.figure4(res["items"], tmp_path / "f4.png")
    report.figure5(res["items"], tmp_path / "f5.png")
    for f in ("f4.png", "f5.png"):
        assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not math.isnan(report.mi_groups(res["items"])[1][-1][1])
