"""A model whose card hands a format to a part (card field 'readers'): the shipped default reads
the shortcut format with a 6-layer student.  Here the tiny one-sequence model with a second tiny
model (other weights, built through the shipped path) as its shortcut part, on real RACE dev
questions: each format's logits are those of the model that reads it, the card's checks at load,
the benchmark fingerprint, and the word rows no text reaches (`models.export.vocab_gap`)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from desktop.domain.errors import ModelError
from tests.test_one_sequence import TINY, race_questions

PART_T = 1.3


def _write(card_path: Path, **changes) -> None:
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card.update(changes)
    card_path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> Path:
    from models.export.tiny_one_sequence import build

    root = tmp_path_factory.mktemp("pair")
    d = root / "pair"
    shutil.copytree(TINY, d)
    build(d / "shortcut", TINY / "tokenizer.json", seed=1)
    _write(d / "shortcut" / "card.json", id="tiny-part", name="tiny shortcut part",
           temperature={"standard": 1.0, "shortcut": PART_T})
    _write(d / "card.json", id="tiny-pair", readers={"shortcut": "shortcut"},
           temperature={"standard": 1.0, "shortcut": PART_T})
    return d


def _copy(pair: Path, tmp_path: Path) -> Path:
    d = tmp_path / "pair"
    shutil.copytree(pair, d)
    return d


def test_each_format_is_scored_by_the_model_that_reads_it(pair):
    import inference

    qs, passages = race_questions(4)
    both = inference.load_model(pair, device="cpu")
    main = inference.load_model(TINY, device="cpu")
    part = inference.load_model(pair / "shortcut", device="cpu")
    got = inference.score(both, qs, passages, ["standard", "shortcut"])
    want_std = inference.score(main, qs, passages, ["standard"])
    want_sc = inference.score(part, qs, passages, ["shortcut"])
    for g, s, c in zip(got, want_std, want_sc):
        assert g.formats["standard"].logits == s.formats["standard"].logits
        assert g.formats["shortcut"].logits == c.formats["shortcut"].logits
        assert g.formats["shortcut"].temperature == PART_T
        assert g.evidence == s.evidence  # the evidence reads the standard format: the main graph's
    # the part is another reader: its shortcut answers are not the main graph's
    alone = inference.score(main, qs, passages, ["shortcut"])
    assert any(a.formats["shortcut"].logits != c.formats["shortcut"].logits for a, c in zip(alone, want_sc))
    assert both.runner_for("shortcut") is both.parts["shortcut"].runner
    assert both.runner_for("standard") is both.runner
    assert "the shortcut format read by tiny shortcut part" in both.message


@pytest.mark.parametrize("break_it, says", [
    (lambda d: (d / "shortcut" / "tokenizer.json").write_text(
        (d / "shortcut" / "tokenizer.json").read_text(encoding="utf-8") + "\n", encoding="utf-8"),
     "a part must read the same token ids"),
    (lambda d: _write(d / "shortcut" / "card.json", temperature={"shortcut": 2.0}), "temperature 2.0 for shortcut"),
    (lambda d: _write(d / "shortcut" / "card.json", formats=["standard"]), "not the shortcut format"),
    (lambda d: _write(d / "card.json", readers={"shortcut": "../shortcut"}), "must be a directory inside"),
    (lambda d: _write(d / "card.json", readers={"shortcut": "nowhere"}), "holds no card.json"),
    (lambda d: _write(d / "card.json", formats=["standard"], readers={"shortcut": "shortcut"}),
     "which the card does not serve"),
    (lambda d: _write(d / "shortcut" / "card.json", readers={"shortcut": "x"}), "holds no card.json"),
])
def test_a_part_that_does_not_fit_is_refused_naming_the_file(pair, tmp_path, break_it, says):
    import inference

    d = _copy(pair, tmp_path)
    break_it(d)
    with pytest.raises(ModelError, match=says.replace("(", r"\(").replace(".", r"\.")):
        inference.load_model(d, device="cpu")


def test_the_fingerprint_covers_the_part(pair, tmp_path):
    from benchmarks.runs import model_fingerprint

    d = _copy(pair, tmp_path)
    before = model_fingerprint(d)
    assert "shortcut/model.int8.onnx.data0" in before["files"] and "model.int8.onnx.data0" in before["files"]
    assert model_fingerprint(TINY)["files"] == [f for f in before["files"] if "/" not in f]
    data = d / "shortcut" / "model.int8.onnx.data0"
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 1
    data.write_bytes(bytes(raw))
    assert model_fingerprint(d)["sha256"] != before["sha256"]


def test_the_unused_word_rows_are_unreachable_and_leaving_them_out_changes_no_logit(tmp_path):
    import onnx

    import inference
    from inference.formatting import load_tokenizer
    from models.export import vocab_gap
    from models.export.mpnet_onnx import state_from_graph

    blocks = vocab_gap.unreachable_blocks(TINY / "tokenizer.json")
    assert blocks == [(5, 104), (108, 1003)]  # around [UNK] (the word-piece model's unknown token) .. [MASK]
    tok = load_tokenizer(TINY / "tokenizer.json")
    ids = tok.encode("[unused0] [unused993] [CLS] [SEP] [MASK] [UNK] \U0001F600 naïve").ids
    assert not [i for i in ids for a, b in blocks if a <= i < b] and 104 in ids
    out = tmp_path / "gap"
    assert vocab_gap.main([str(TINY), str(out)]) == 0
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["quantization"]["vocab_gap"]["rows_left_out"] == [[5, 104], [108, 1003]]
    qs, passages = race_questions(4)
    qs[0].stem += " [unused7] \U0001F600"  # an unknown piece of text: [UNK], kept
    whole = inference.load_model(TINY, device="cpu")
    cut = inference.load_model(out, device="cpu")
    for fmt in ("standard", "shortcut"):
        a = inference.score(whole, qs, passages, [fmt])
        b = inference.score(cut, qs, passages, [fmt])
        assert [r.formats[fmt].logits for r in a] == [r.formats[fmt].logits for r in b]
    full, _ = state_from_graph(onnx.load(str(TINY / "model.int8.onnx")))
    back, _ = state_from_graph(onnx.load(str(out / "model.int8.onnx")))
    key = "encoder.embeddings.word_embeddings.weight"
    assert back[key].shape == full[key].shape
    gone = np.zeros(len(full[key]), dtype=bool)
    for a, b in blocks:
        gone[a:b] = True
    assert np.array_equal(back[key][~gone], full[key][~gone]) and not back[key][gone].any()
    with pytest.raises(ValueError, match="already leaves"):
        vocab_gap.drop(onnx.load(str(out / "model.int8.onnx")), blocks)


def test_beside_a_window_the_part_loads_after_the_main_graph_and_a_closed_window_stops_it(pair):
    import inference

    # the window's model thread: the parts one after the other, and none once the window has closed
    model = inference.load_model(pair, device="cpu", beside_window=True)
    assert model.parts["shortcut"].card.id == "tiny-part" and model.runner.spin is False
    asked = []
    with pytest.raises(ModelError, match="loading stopped before its shortcut part"):
        inference.load_model(pair, device="cpu", beside_window=True, cancel=lambda: asked.append(1) or True)
    assert asked == [1]  # asked once, after the main graph, before the part
