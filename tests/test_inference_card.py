"""Model card: round trip, validation, and clear errors for missing or mismatched files."""
from __future__ import annotations

import json

import pytest

from desktop.domain.errors import ModelError
from inference.card import ModelCard, card_from_json, check_graph_inputs, load_card


def _card(**kw):
    base = dict(name="t", id="t-1", backbone="bert", formats=["standard", "shortcut"],
                files={"fp32": "model.onnx"}, temperature={"standard": 1.2})
    base.update(kw)
    return ModelCard(**base)


def test_round_trip_keeps_unknown_fields(tmp_path):
    card = _card()
    card.extra["note"] = "kept"
    card.save(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"x")
    (tmp_path / "tokenizer.json").write_text("{}")
    back = load_card(tmp_path)
    assert back.to_json() == card.to_json()
    assert back.temperature_for("standard") == 1.2 and back.temperature_for("shortcut") == 1.0


@pytest.mark.parametrize("change, words", [
    ({"formats": ["context_only"]}, "unknown input format"),
    ({"temperature": {"standard": 0}}, "positive"),
    ({"files": {}}, "names no graph"),
    ({"files": {"bf16": "m.onnx"}}, "unknown graph precision"),
    ({"max_length": "512"}, "max_length"),
    ({"files": {"int8": "../elsewhere.onnx"}}, "plain names"),
])
def test_invalid_cards_are_refused_with_the_reason(change, words):
    data = _card().to_json()
    data.update(change)
    with pytest.raises(ModelError, match=words):
        card_from_json(data)


def test_missing_directory_card_graph_and_tokenizer(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        load_card(tmp_path / "nowhere")
    with pytest.raises(ModelError, match="no card.json"):
        load_card(tmp_path)
    (tmp_path / "card.json").write_text("{not json")
    with pytest.raises(ModelError, match="cannot read"):
        load_card(tmp_path)
    _card().save(tmp_path)
    with pytest.raises(ModelError, match="fp32 graph model.onnx .* missing"):
        load_card(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"x")
    with pytest.raises(ModelError, match="tokenizer"):
        load_card(tmp_path)


def test_graph_inputs_must_match_the_card():
    card = _card(inputs=["input_ids", "attention_mask"])
    check_graph_inputs(card, ["attention_mask", "input_ids"], "m.onnx")
    with pytest.raises(ModelError, match="differ from the card"):
        check_graph_inputs(card, ["input_ids", "attention_mask", "token_type_ids"], "m.onnx")
    with pytest.raises(ModelError, match="does not produce"):
        check_graph_inputs(card, ["input_ids", "pixel_values"], "m.onnx")
