"""The shipped model's temperatures: the seed's rule on its own RACE dev logits.

The logits are the build's evaluation rows (docs/model_runs/cpu-reader-2026-11-27/eval/
float32_race-{dev,test}_384.jsonl.gz: the shipped files' weights in float32, the model the CPU
recipes are checked against; `python -m models.report.cpu_reader_card` writes the card from them);
the shortcut format's are those of the part that reads it (shortcut-m6/eval/)."""
import gzip
import json
from pathlib import Path

import pytest

from inference.card import load_card
from inference.metrics import expected_calibration_error, fit_temperature, mean_max_probability, softmax
from models.training.predictions import arrays, by_format

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "models" / "default"
RUN = ROOT / "docs" / "model_runs" / "cpu-reader-2026-11-27"
EVAL = {"standard": RUN / "eval", "shortcut": RUN / "shortcut-m6" / "eval"}  # the default hands shortcut to its part


def _rows(name: str) -> dict:
    return {fmt: by_format([json.loads(line) for line in gzip.open(EVAL[fmt] / name, "rt", encoding="utf-8")])[fmt]
            for fmt in EVAL}


@pytest.fixture(scope="module")
def rows():
    return {"dev": _rows("float32_race-dev_384.jsonl.gz"), "test": _rows("float32_race-test_384.jsonl.gz")}


@pytest.mark.parametrize("fmt", ["standard", "shortcut"])
def test_temperature_rule_on_real_logits(rows, fmt):
    dev = rows["dev"][fmt]
    assert len(dev) == 4859  # RACE dev after de-duplication
    _, z, keys = arrays(dev)
    t = fit_temperature(z, keys)
    # the card's temperature is this rule on these logits, at the card's own length (384)
    card = load_card(DEFAULT)
    assert card.max_length == 384
    assert card.temperature[fmt] == pytest.approx(t, rel=1e-9)
    acc = float((z.argmax(1) == keys).mean())
    assert mean_max_probability(z, t) == pytest.approx(acc, abs=1e-3)
    # temperature never changes the prediction; on RACE test (never tuned on) it lowers the ECE
    assert (softmax(z, t).argmax(1) == z.argmax(1)).all()
    test = rows["test"][fmt]
    _, zt, kt = arrays(test)
    assert len(test) == 4934
    assert expected_calibration_error(softmax(zt, t), kt) < expected_calibration_error(softmax(zt), kt)
