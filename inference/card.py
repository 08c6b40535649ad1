"""The model card (`card.json`): what a model directory holds and how to feed it.

A model directory::

    card.json         this card
    tokenizer.json    a `tokenizers` file
    model.onnx        fp32 graph (optional when an int8 graph is shipped)
    model.int8.onnx   dynamically quantized graph, preferred on CPU
    model.fp16.onnx   graph for GPU (optional: derived from int8/fp32 on first GPU use)

Card fields (JSON object)::

    name, id            display name; the id stored with every prediction
    backbone            e.g. "sentence-transformers/all-MiniLM-L6-v2"
    formats             input formats trained (inference.formatting.FORMATS)
    max_length          tokens per (passage, question+option) sequence
    truncation          inference.formatting.TRUNCATION_RULE
    cloze               inference.formatting.CLOZE_RULE
    temperature         {format: T}; probabilities = softmax(logits / T)
    files               {"fp32": "model.onnx", "int8": "model.int8.onnx", "fp16": ...}
    tokenizer           "tokenizer.json"
    inputs              graph input names (input_ids, attention_mask[, token_type_ids])
    pooling             "cls" or "mean" (per-alternative layout); "options" (one-sequence layout)
    layout              "per-alternative" (one sequence per alternative, the default) or
                        "one-sequence" (passage, stem and every alternative in one input;
                        inference.one_sequence)
    weights             optional: a sibling model directory ("../default") whose graph and
                        tokenizer this card reads (the same weights at another max_length)
    readers             optional: {format: "NAME"}, a model directory inside this one whose
                        graph reads that format instead of this card's graph (a smaller
                        student for the shortcut format); same tokenizer, same layout, and
                        this card's temperature for the format is the part's own
    training            {data: [...], seeds: [...], folds: k, ...} free-form
    metrics             {format: {accuracy: ..., ece: ...}, ...} free-form
    command             the command that produced the model
    created             ISO date
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop.domain.errors import ModelError
from inference.formatting import CLOZE_RULE, FORMATS, TRUNCATION_RULE

CARD_FILE = "card.json"
CARD_VERSION = 1
PRECISIONS = ("fp32", "int8", "fp16")
GRAPH_INPUTS = ("input_ids", "attention_mask", "token_type_ids", "option_ids")
LAYOUTS = ("per-alternative", "one-sequence")


@dataclass
class ModelCard:
    name: str
    id: str
    backbone: str
    formats: list[str]
    max_length: int = 512
    truncation: str = TRUNCATION_RULE
    cloze: str = CLOZE_RULE
    temperature: dict[str, float] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    tokenizer: str = "tokenizer.json"
    inputs: list[str] = field(default_factory=lambda: list(GRAPH_INPUTS))
    pooling: str = "cls"
    layout: str = "per-alternative"
    weights: str = ""
    readers: dict[str, str] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    command: str = ""
    created: str = ""
    version: int = CARD_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def temperature_for(self, fmt: str) -> float:
        return float(self.temperature.get(fmt, 1.0))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        data.update(extra)  # unknown fields of a read card go back where they were
        return data

    def save(self, directory: str | Path) -> Path:
        path = Path(directory) / CARD_FILE
        path.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path


_REQUIRED = ("name", "id", "backbone", "formats")


def card_from_json(data: dict[str, Any], where: str = CARD_FILE) -> ModelCard:
    if not isinstance(data, dict):
        raise ModelError(f"{where}: the model card must be a JSON object")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise ModelError(f"{where}: the model card lacks {', '.join(missing)}")
    known = set(ModelCard.__dataclass_fields__) - {"extra"}
    check_types(data, where)
    card = ModelCard(**{k: v for k, v in data.items() if k in known},
                     extra={k: v for k, v in data.items() if k not in known})
    validate_card(card, where)
    return card


# The JSON type of each field: a card with another type (a list for 'files', a string
# for 'formats') is refused at load, naming the field, instead of failing somewhere later.
_TEXT = ("name", "id", "backbone", "truncation", "cloze", "tokenizer", "pooling", "command", "created", "layout",
         "weights")
_OBJECTS = ("temperature", "files", "training", "metrics", "readers")
_TEXT_LISTS = ("formats", "inputs")


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def check_types(data: dict[str, Any], where: str = CARD_FILE) -> None:
    """Every known field of a card has its JSON type; ModelError `<file>: field '<name>': ...` if not."""
    def bad(name: str, expected: str, value) -> ModelError:
        return ModelError(f"{where}: field '{name}' must be {expected}, got {_json_type(value)} ({value!r:.60})")

    for name in _TEXT:
        if name in data and not isinstance(data[name], str):
            raise bad(name, "a string", data[name])
    for name in ("name", "id"):
        if name in data and not data[name].strip():
            raise ModelError(f"{where}: field '{name}' is empty")
    for name in _OBJECTS:
        if name in data and not isinstance(data[name], dict):
            raise bad(name, "an object", data[name])
    for name in _TEXT_LISTS:
        if name in data and not (isinstance(data[name], list) and all(isinstance(x, str) for x in data[name])):
            raise bad(name, "a list of strings", data[name])
    for name in ("max_length", "version"):
        if name in data and (isinstance(data[name], bool) or not isinstance(data[name], int)):
            raise bad(name, "an integer", data[name])
    for fmt, t in data.get("temperature", {}).items():
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not t > 0:
            raise ModelError(f"{where}: field 'temperature', format {fmt!r}: must be a positive finite number, "
                             f"got {t!r:.60}")
    for precision, name in data.get("files", {}).items():
        if not isinstance(name, str):
            raise ModelError(f"{where}: field 'files', {precision!r}: must be a file name, got {_json_type(name)}")
    for fmt, name in data.get("readers", {}).items():
        if not isinstance(name, str):
            raise ModelError(f"{where}: field 'readers', {fmt!r}: must be a directory name, got {_json_type(name)}")


def validate_card(card: ModelCard, where: str = CARD_FILE) -> None:
    if not card.formats:
        raise ModelError(f"{where}: 'formats' is empty; the card must name the input formats trained")
    bad = [f for f in card.formats if f not in FORMATS]
    if bad:
        raise ModelError(f"{where}: unknown input format(s) {bad}; known: {', '.join(FORMATS)}")
    if not isinstance(card.max_length, int) or card.max_length < 8:
        raise ModelError(f"{where}: 'max_length' must be an integer >= 8, got {card.max_length!r}")
    for fmt, t in card.temperature.items():
        if fmt not in FORMATS:
            raise ModelError(f"{where}: temperature given for unknown format {fmt!r}")
        if not isinstance(t, (int, float)) or not t > 0:
            raise ModelError(f"{where}: temperature for {fmt} must be a positive number, got {t!r}")
    if not card.files:
        raise ModelError(f"{where}: 'files' names no graph (expected keys among {', '.join(PRECISIONS)})")
    bad = [p for p in card.files if p not in PRECISIONS]
    if bad:
        raise ModelError(f"{where}: unknown graph precision(s) {bad} in 'files'; known: {', '.join(PRECISIONS)}")
    names = list(card.files.values()) + [card.tokenizer]
    bad = [n for n in names if not isinstance(n, str) or not n or "/" in n or "\\" in n or n.startswith(".")]
    if bad:
        raise ModelError(f"{where}: file names {bad} must be plain names inside the model directory")
    bad = [i for i in card.inputs if i not in GRAPH_INPUTS]
    if bad or "input_ids" not in card.inputs:
        raise ModelError(f"{where}: 'inputs' must include input_ids and only {', '.join(GRAPH_INPUTS)}; got {card.inputs}")
    if card.layout not in LAYOUTS:
        raise ModelError(f"{where}: 'layout' must be one of {', '.join(LAYOUTS)}, got {card.layout!r}")
    if card.layout == "one-sequence":
        if "option_ids" not in card.inputs:
            raise ModelError(f"{where}: a one-sequence model's 'inputs' must include option_ids")
        bad = [f for f in card.formats if f not in ("standard", "shortcut")]
        if bad:
            raise ModelError(f"{where}: the one-sequence layout serves standard and shortcut only, not {bad}")
    elif card.pooling not in ("cls", "mean"):
        raise ModelError(f"{where}: 'pooling' must be 'cls' or 'mean', got {card.pooling!r}")
    for fmt, name in card.readers.items():
        if fmt not in card.formats:
            raise ModelError(f"{where}: field 'readers' names the {fmt!r} format, which the card does not serve "
                             f"({', '.join(card.formats)})")
        if not name or "/" in name or "\\" in name or name.startswith("."):
            raise ModelError(f"{where}: field 'readers', {fmt!r}: {name!r} must be a directory inside the model "
                             f"directory (a plain name)")
    if card.weights and (card.weights.count("/") != 1 or not card.weights.startswith("../")
                         or card.weights.rstrip("/") in ("..", "../.")):
        raise ModelError(f"{where}: 'weights' must name a sibling model directory ('../NAME'), got {card.weights!r}")


def load_card(directory: str | Path) -> ModelCard:
    """Read and check `card.json` and that every file it names exists."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ModelError(f"model directory {directory} does not exist")
    path = directory / CARD_FILE
    if not path.is_file():
        raise ModelError(f"{directory} holds no {CARD_FILE}: not a model directory")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: cannot read the model card ({exc})") from exc
    card = card_from_json(data, str(path))
    files = files_directory(directory, card)
    if not files.is_dir():
        raise ModelError(f"{path}: 'weights' names {card.weights}, which is not a model directory beside it")
    for precision, name in card.files.items():
        if not (files / name).is_file():
            raise ModelError(f"{path}: the {precision} graph {name} named by the card is missing from {files}")
    if not (files / card.tokenizer).is_file():
        raise ModelError(f"{path}: the tokenizer file {card.tokenizer} is missing from {files}")
    for fmt, name in card.readers.items():
        if not (directory / name / CARD_FILE).is_file():
            raise ModelError(f"{path}: field 'readers', {fmt!r}: {directory / name} holds no {CARD_FILE}")
    return card


def files_directory(directory: str | Path, card: ModelCard) -> Path:
    """Where the card's graph and tokenizer are: its own directory, or the sibling `weights` names."""
    directory = Path(directory)
    return (directory / card.weights).resolve() if card.weights else directory


def check_graph_inputs(card: ModelCard, graph_inputs: list[str], graph_file: str) -> None:
    """A card/graph mismatch is an error that names both sides."""
    unknown = [n for n in graph_inputs if n not in GRAPH_INPUTS]
    if unknown:
        raise ModelError(f"{graph_file}: the graph expects input(s) {unknown} that this runtime does not "
                         f"produce (it produces {', '.join(GRAPH_INPUTS)})")
    if set(graph_inputs) != set(card.inputs):
        raise ModelError(f"{graph_file}: the graph's inputs {sorted(graph_inputs)} differ from the card's "
                         f"'inputs' {sorted(card.inputs)}; the card does not describe this graph")
