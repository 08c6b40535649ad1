"""Light checks of the shipped model itself (models/default): its card, its file sizes, and that
the files score real questions as the build's evaluation recorded.

The MPNet reader takes one to two seconds a question on two cores: behaviour and speed are
tested on tests/data/tiny_model and on a tiny MPNet exported through the same code
(tests/test_mpnet_model_files.py); here it scores two RACE test questions."""
from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from inference.card import load_card

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "models" / "default"
RUN = ROOT / "docs" / "model_runs" / "mpnet-4xh100-2026-11-27"
DATA = ROOT.parent / "shared" / "data"
MB = 1_000_000


def test_the_card_says_what_the_model_is_and_how_it_was_made():
    card = load_card(DEFAULT)
    assert card.id == "mpnet-race-v1" and card.backbone == "sentence-transformers/all-mpnet-base-v2"
    assert card.formats == ["standard", "shortcut"] and card.pooling == "mean"
    assert card.inputs == ["input_ids", "attention_mask"] and card.files == {"int8": "model.int8.onnx"}
    t = card.training
    assert t["data"]["race"] == {"train": 87866 - 526, "dev": 4887 - 28}  # race/README.md minus models.dedup
    assert t["deduplication"]["removed"] == {"train": {"questions": 526, "passages": 147},
                                             "dev": {"questions": 28, "passages": 8}}
    assert [r["round"] for r in t["rounds"]] == [1, 2]
    assert t["epochs"] == pytest.approx(sum(r["epochs"] for r in t["rounds"]), abs=0.01)
    assert t["train_s"] == pytest.approx(sum(r["train_s"] for r in t["rounds"]), abs=0.1)
    assert t["hardware"]["gpus"] == 4 and t["gpu_minutes"] == pytest.approx(4 * t["train_s"] / 60, abs=0.1)
    q = card.extra["quantization"]
    assert q["recipe"] and {"standard", "shortcut", "questions", "reference"} <= set(q["agreement"])
    # the rule, as measured: below 99%, and the card says so
    assert q["agreement"]["meets_99"] is (min(q["agreement"]["standard"], q["agreement"]["shortcut"]) >= 0.99)
    assert sorted(q["files"]) == sorted(p.name for p in DEFAULT.glob("model.int8.onnx*"))
    ev = card.metrics["evaluation"]
    assert "cuda" in ev["measured"] and "inference.load_model" in ev["measured"]
    for fmt in card.formats:
        assert card.temperature[fmt] > 0
        for name, s in ev["formats"][fmt]["sets"].items():
            assert s["ci95"][0] < s["accuracy"] < s["ci95"][1], (fmt, name)
    assert ev["formats"]["shortcut"]["shortcut_n_below_2"]["n"] > 0


def test_every_file_fits_a_git_host():
    sizes = {p.name: p.stat().st_size for p in DEFAULT.iterdir() if p.is_file()}
    assert all(size < 95 * MB for size in sizes.values()), sizes
    assert sum(sizes.values()) <= 120 * MB
    try:
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                                 timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    big = [f for f in tracked if f and (ROOT / f).is_file() and (ROOT / f).stat().st_size >= 95 * MB]
    assert not big


def _clear_race_test_questions(n: int):
    """The first `n` RACE test questions (file order) whose recorded logits have a clear winner in
    both formats, with those logits: (records, {(id, format): logits})."""
    from models.dedup import read_race
    from models.race_pack import race_records

    rows = {}
    for line in gzip.open(RUN / "eval_rows.jsonl.gz", "rt", encoding="utf-8"):
        r = json.loads(line)
        if r["source"] == "race" and r["role"] == "eval":
            rows[(r["id"], r["format"])] = r["logits"]

    def margin(z):
        top = sorted(z)[-2:]
        return top[1] - top[0]

    chosen = []
    for rec in race_records(read_race(DATA / "race", "test"), "eval"):
        if all(margin(rows[(rec["id"], f)]) > 1.0 for f in ("standard", "shortcut")):
            chosen.append(rec)
            if len(chosen) == n:
                break
    return chosen, rows


def test_the_files_score_two_race_test_questions_as_the_evaluation_recorded():
    # the evaluation ran these files through inference.load_model on a GPU (fp16 graph derived
    # from them); the CPU int8 graph differed from it by at most 0.11 on 40 questions
    import inference
    from inference.formatting import encode_questions

    records, recorded = _clear_race_test_questions(2)
    model = inference.load_model(DEFAULT, device="cpu")
    for fmt in ("standard", "shortcut"):
        enc = encode_questions(model.tokenizer, [(r["passage"], r["stem"], r["alternatives"]) for r in records],
                               fmt, model.card.max_length)
        got = model.runner.logits(enc)
        for row, rec in zip(got, records):
            want = np.array(recorded[(rec["id"], fmt)])
            assert np.abs(row[: len(want)] - want).max() < 0.3, (fmt, rec["id"])
            assert int(np.argmax(row)) == int(np.argmax(want))
