"""Light checks of the shipped models themselves (models/default, the fast one-sequence reader with
its 6-layer shortcut part in models/default/shortcut, and models/accurate, the 12-layer files read
at 512 tokens): their cards against the build's records, their file sizes, and that the files score
real RACE test questions as the evaluation recorded, in both CPU recipes the cards allow.

Behaviour and speed are tested on the tiny one-sequence model (tests/test_one_sequence.py); here
the real files score three RACE test questions."""
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
ACCURATE = ROOT / "models" / "accurate"
PART = DEFAULT / "shortcut"
RUN = ROOT / "docs" / "model_runs" / "cpu-reader-2026-11-27"
DATA = ROOT.parent / "shared" / "data"
MB = 1_000_000


def test_the_cards_are_what_the_build_records_give():
    from models.report.cpu_reader_card import build

    default, accurate, part = build(RUN, ROOT / "models")
    for path, want in ((DEFAULT, default), (ACCURATE, accurate), (PART, part)):
        have = json.loads((path / "card.json").read_text(encoding="utf-8"))
        have.pop("created"), want.pop("created")
        assert have == json.loads(json.dumps(want)), f"{path}/card.json: run python -m models.report.cpu_reader_card"


def test_the_card_says_what_the_model_is_and_how_it_was_made():
    card = load_card(DEFAULT)
    assert card.id == "mpnet-race-oneseq-384-sc6" and card.layout == "one-sequence" and card.max_length == 384
    assert card.readers == {"shortcut": "shortcut"}
    part = load_card(PART)
    assert part.formats == ["shortcut"] and part.temperature == {"shortcut": card.temperature["shortcut"]}
    pq = part.extra["quantization"]
    assert sorted(pq["files"]) == sorted(p.name for p in PART.glob("model.int8.onnx*"))
    assert pq["vocab_gap"]["rows_left_out"] == [[5, 104], [108, 1003]]
    for recipe, by_length in pq["runtime_measured"].items():  # checked in the one format the part reads
        assert list(by_length["384"]) == ["shortcut", "kept"] and by_length["384"]["shortcut"]["questions"] == 4859
        assert (recipe in pq["runtime"]) is (by_length["384"]["shortcut"]["agreement"] >= 0.993), recipe
    assert pq["runtime"] == ["fp32", "int8x2"]
    assert card.metrics["evaluation"]["formats"]["shortcut"] == part.metrics["evaluation"]["formats"]["shortcut"]
    assert card.inputs == ["input_ids", "attention_mask", "option_ids"] and card.files == {"int8": "model.int8.onnx"}
    t = card.training
    assert t["teacher"]["id"] == "mpnet-race-v1"
    assert t["data"]["race"] == {"train": 87866 - 526, "dev": 4887 - 28}  # race/README.md minus models.training.dedup
    d = t["distillation"]
    assert {"init", "targets", "loss", "lr", "epochs"} <= set(d) and d["epochs"] > 1
    q = card.extra["quantization"]
    assert sorted(q["files"]) == sorted(p.name for p in DEFAULT.glob("model.int8.onnx*"))
    # the rule: a CPU recipe is kept only where it agrees with the float model on >= 99.3% of
    # RACE dev in each format its graph reads: these 12 layers read the standard format alone at 384
    # tokens (the part reads the shortcut); the card keeps exactly those, and says what the others measured
    for recipe, by_length in q["runtime_measured"].items():
        ok = by_length.get("384", {}).get("standard", {}).get("agreement", 0) >= 0.993
        assert (recipe in q["runtime"]) is ok, recipe
        assert all(m["standard"]["questions"] == 4859 for m in by_length.values())
    assert q["runtime"][0] == "fp32" and "int8x2" in q["runtime"] and "int8" not in q["runtime"]
    assert "int8x2-first8" in q["runtime"] and "int8x2-first7" not in q["runtime"]  # 99.55% and 99.07%
    ev = card.metrics["evaluation"]
    for fmt in card.formats:
        assert card.temperature[fmt] == ev["formats"][fmt]["temperature"] > 0
        for name, s in ev["formats"][fmt]["sets"].items():
            assert s["ci95"][0] < s["accuracy"] < s["ci95"][1], (fmt, name)
    n2 = ev["formats"]["shortcut"]["shortcut_n_below_2"]
    assert n2["n"] >= 250 and n2["accuracy"] >= 0.8
    # the evidence settings are those the cross-validation's folds chose most often
    cv = json.loads((RUN / "evidence_cv.json").read_text())
    chosen = [json.dumps(c["settings"], sort_keys=True) for c in cv["choices"]]
    assert chosen.count(json.dumps(card.extra["evidence"], sort_keys=True)) == max(chosen.count(c) for c in chosen)


def test_within_two_points_of_the_teacher_and_the_accurate_reading_is_the_most_accurate():
    default, accurate = load_card(DEFAULT), load_card(ACCURATE)
    teacher = default.training["teacher"]["race_test"]
    test = {c.id: {f: c.metrics["evaluation"]["formats"][f]["sets"]["race-test"]["accuracy"] for f in c.formats}
            for c in (default, accurate)}
    for fmt in ("standard", "shortcut"):
        assert test[default.id][fmt] >= teacher[fmt] - 0.02
        assert test[accurate.id][fmt] >= max(test[default.id][fmt], teacher[fmt])
    assert accurate.weights == "../default" and accurate.max_length == 512


def test_every_file_fits_a_git_host():
    sizes = {p: p.stat().st_size for d in (DEFAULT, PART, ACCURATE) for p in d.iterdir() if p.is_file()}
    assert all(size < 95 * MB for size in sizes.values()), sizes
    assert sum(sizes.values()) <= 180 * MB
    try:
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                                 timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    big = [f for f in tracked if f and (ROOT / f).is_file() and (ROOT / f).stat().st_size >= 95 * MB]
    assert not big


def _clear_race_test_questions(n: int):
    """The first `n` RACE test questions (file order) whose recorded float logits have a clear winner
    in both formats: (records, {(id, format): logits})."""
    from models.training.dedup import read_race
    from models.training.race_pack import race_records

    rows = {}
    # the standard format: the 12 layers' float model; the shortcut format: the part's (its own run)
    for path, fmt in ((RUN / "eval" / "float32_race-test_384.jsonl.gz", "standard"),
                      (RUN / "shortcut-m6" / "eval" / "float32_race-test_384.jsonl.gz", "shortcut")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if r["format"] == fmt:
                    rows[(r["id"], fmt)] = r["logits"]

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


@pytest.mark.parametrize("recipe", ["fp32", "int8x2"])
def test_the_files_score_race_test_questions_as_the_evaluation_recorded(recipe, monkeypatch):
    # the evaluation is the float model of these files (PyTorch float32 on their weights); both
    # CPU recipes the card allows compute it to ~1e-3 of a logit
    import inference
    from inference.one_sequence import encode

    monkeypatch.setenv("MCQLENS_CPU_RECIPE", recipe)
    records, recorded = _clear_race_test_questions(3)
    model = inference.load_model(DEFAULT, device="cpu")
    assert model.runner.recipe == recipe and recipe in model.message
    assert model.runner_for("shortcut").recipe == recipe and model.runner_for("shortcut").card.id == load_card(PART).id
    for fmt in ("standard", "shortcut"):
        for rec in records:
            row = model.runner_for(fmt).logits_one(encode(model.tokenizer, [(rec["passage"], rec["stem"],
                                                                              rec["alternatives"])],
                                                          fmt, model.card.max_length))[0]
            want = np.array(recorded[(rec["id"], fmt)])
            assert np.abs(row[: len(want)] - want).max() < 5e-3, (fmt, rec["id"])


def test_the_first8_recipe_takes_one_pass_in_the_last_four_layers_and_keeps_clear_answers(monkeypatch):
    # int8x2-first8 (what a VNNI CPU runs for the 12 layers): the second int8 pass in layers 0-7 only;
    # on RACE dev it moved 0.45% of the standard format's answers (the card), so questions the float
    # model answers by a clear margin keep their answer, and the logits stay within a few hundredths
    import onnx

    import inference
    from inference import cpu_recipes
    from inference.one_sequence import encode

    graph = cpu_recipes.derive(onnx.load(str(DEFAULT / "model.int8.onnx")), "int8x2-first8")
    second = {n.name.split("_")[0] for n in graph.graph.node if n.name.endswith("_rmmi")}
    first = {n.name.split("_")[0] for n in graph.graph.node if n.name.endswith("_mmi")}
    assert second == {f"l{i}" for i in range(8)} and first == {f"l{i}" for i in range(12)}
    allowed = load_card(DEFAULT).extra["quantization"]["runtime"]
    assert cpu_recipes.choose(allowed, {"avx512_vnni"})[0] == "int8x2-first8"  # the fastest the card keeps
    assert cpu_recipes.choose(allowed, {"avx2"})[0] == "fp32"
    assert cpu_recipes.choose(load_card(PART).extra["quantization"]["runtime"], {"amx_int8"})[0] == "int8x2"

    monkeypatch.setenv("MCQLENS_CPU_RECIPE", "int8x2-first8")
    records, recorded = _clear_race_test_questions(3)
    model = inference.load_model(DEFAULT, device="cpu")
    assert model.runner.recipe == "int8x2-first8"
    for fmt in ("standard", "shortcut"):
        for rec in records:
            row = model.runner_for(fmt).logits_one(encode(model.tokenizer, [(rec["passage"], rec["stem"],
                                                                              rec["alternatives"])],
                                                          fmt, model.card.max_length))[0]
            want = np.array(recorded[(rec["id"], fmt)])
            assert np.argmax(row[: len(want)]) == np.argmax(want), (fmt, rec["id"])
            assert np.abs(row[: len(want)] - want).max() < 0.25, (fmt, rec["id"])
    # the three in one call run side by side, one thread each (inference.side_by_side): the same
    # logits and the same attention the evidence weighs, bit for bit, as each question alone
    from inference.option_attention import OUTPUT

    items = [(rec["passage"], rec["stem"], rec["alternatives"]) for rec in records]
    r = model.runner
    assert r.attention_layers and (r.side_workers > 1) == (r.side_session is not None)
    z, more = r.logits_one(encode(model.tokenizer, items, "standard", model.card.max_length), (OUTPUT,))
    for b, item in enumerate(items):
        z1, more1 = r.logits_one(encode(model.tokenizer, [item], "standard", model.card.max_length), (OUTPUT,))
        assert np.array_equal(z[b], z1[0]) and np.array_equal(more[OUTPUT][b, :, :more1[OUTPUT].shape[-1]],
                                                              more1[OUTPUT][0])
