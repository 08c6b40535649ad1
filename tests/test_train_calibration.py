"""The shipped model's temperatures: the seed's rule on its own RACE dev logits.

The logits are the build's evaluation rows (docs/model_runs/mpnet-4xh100-2026-11-27/
eval_rows.jsonl.gz: the shipped files through `inference.load_model` on a GPU)."""
import gzip
import json
from pathlib import Path

import pytest

from inference.card import load_card
from inference.metrics import expected_calibration_error, mean_max_probability, softmax
from models.predictions import arrays, by_format, fit_temperatures

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "models" / "default"
ROWS = ROOT / "docs" / "model_runs" / "mpnet-4xh100-2026-11-27" / "eval_rows.jsonl.gz"


@pytest.fixture(scope="module")
def rows():
    out = [json.loads(line) for line in gzip.open(ROWS, "rt", encoding="utf-8")]
    return {role: by_format([r for r in out if r["role"] == role]) for role in ("dev", "eval")}


@pytest.mark.parametrize("fmt", ["standard", "shortcut"])
def test_temperature_rule_on_real_logits(rows, fmt):
    dev = rows["dev"][fmt]
    assert len(dev) == 4859  # RACE dev after de-duplication
    t = fit_temperatures(dev, [fmt])[fmt]
    # the card's temperature is this rule on these logits (fit_temperatures rounds to 4 decimals)
    assert load_card(DEFAULT).temperature[fmt] == pytest.approx(t, abs=5e-5)
    _, z, keys = arrays(dev)
    acc = float((z.argmax(1) == keys).mean())
    assert mean_max_probability(z, t) == pytest.approx(acc, abs=1e-3)
    # temperature never changes the prediction; on RACE test (never tuned on) it lowers the ECE
    assert (softmax(z, t).argmax(1) == z.argmax(1)).all()
    test = [r for r in rows["eval"][fmt] if r["source"] == "race"]
    _, zt, kt = arrays(test)
    assert len(test) == 4934
    assert expected_calibration_error(softmax(zt, t), kt) < expected_calibration_error(softmax(zt), kt)
