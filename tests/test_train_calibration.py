"""The shipped model's card and out-of-fold predictions: the seed's temperature rule, the size budget."""
import json
from pathlib import Path

import numpy as np
import pytest

from inference.card import load_card
from inference.metrics import expected_calibration_error, mean_max_probability, softmax
from models.predictions import arrays, by_format, fit_temperatures, read_rows

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "models" / "default"
DATA = ROOT / ".." / "shared" / "data"


def test_default_model_files_fit_the_size_budget():
    card = load_card(DEFAULT)
    total = sum(p.stat().st_size for p in DEFAULT.iterdir() if p.is_file())
    assert total <= 25 * 1024 * 1024
    assert set(card.formats) == {"standard", "shortcut"}
    assert card.extra["export"]["int8_agreement"] >= 0.99
    assert card.extra["export"]["max_abs_diff_fp32"] <= 1e-3
    for fmt in card.formats:
        assert card.temperature[fmt] > 0
    assert card.command and card.training["seeds"] and card.training["folds"] >= 2


def test_out_of_fold_predictions_cover_every_race_item_once_per_format():
    rows = read_rows(DEFAULT / "oof_predictions.jsonl")
    per_fmt = by_format(rows)
    assert set(per_fmt) == {"standard", "shortcut"}
    expmrc = json.loads((DATA / "expmrc" / "expmrc-race-dev.json").read_text())
    n_expmrc = sum(len(s["questions"]) for s in expmrc["data"])
    n_embrace = sum(1 for f in ("green", "yellow")
                    for line in open(DATA / "embrace" / f"embrace_{f}.jsonl") for _ in json.loads(line)["test"])
    for fmt, fr in per_fmt.items():
        ids = [r["id"] for r in fr]
        assert len(ids) == len(set(ids)) == n_expmrc + n_embrace
        # the key recorded with each prediction is the file's key
        assert all(0 <= r["key"] < len(r["logits"]) for r in fr)


@pytest.mark.parametrize("fmt", ["standard", "shortcut"])
def test_temperature_rule_on_real_logits(fmt):
    rows = by_format(read_rows(DEFAULT / "oof_predictions.jsonl"))[fmt]
    t = fit_temperatures(rows, [fmt])[fmt]
    _, z, keys = arrays(rows)
    acc = float((z.argmax(1) == keys).mean())
    assert mean_max_probability(z, t) == pytest.approx(acc, abs=1e-3)
    # temperature never changes the prediction, and calibration does not make ECE worse here
    assert (softmax(z, t).argmax(1) == z.argmax(1)).all()
    assert expected_calibration_error(softmax(z, t), keys) <= expected_calibration_error(softmax(z), keys) + 1e-9
