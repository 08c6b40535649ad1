"""A damaged model directory is one `error:` line naming the file and the field, exit status 2.

Copies of the test model, each damaged one way: side files cut short or not UTF-8,
card.json fields of the wrong JSON type, and (the shipped model's layout) the graph's weights
kept as ONNX external data in a file that is missing or cut short.
"""
import json
import shutil
from pathlib import Path

import pytest

from desktop.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_model"
DEV = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"
CARD = json.loads((TINY / "card.json").read_text(encoding="utf-8"))


def _card(**fields) -> bytes:
    return json.dumps({**CARD, **fields}, ensure_ascii=False).encode()


def _cut(path: Path, n: int) -> bytes:
    return path.read_bytes()[:n]


# (case, file to replace, its new bytes, what the error line must say)
CASES = [
    ("card cut short", "card.json", lambda: _card()[:120], ["card.json", "cannot read the model card"]),
    ("card not UTF-8", "card.json", lambda: _card(name="café").decode().encode("latin-1"),
     ["card.json", "utf-8"]),
    ("formats a string", "card.json", lambda: _card(formats="standard"), ["card.json", "'formats'", "a string"]),
    ("files a list", "card.json", lambda: _card(files=["model.int8.onnx"]), ["card.json", "'files'", "a list"]),
    ("file name a number", "card.json", lambda: _card(files={"int8": 5}), ["card.json", "'files'", "'int8'"]),
    ("temperature a list", "card.json", lambda: _card(temperature=[1.5]), ["card.json", "'temperature'"]),
    ("temperature infinite", "card.json", lambda: _card(temperature={"standard": 1e999}),
     ["card.json", "'temperature'", "'standard'", "finite"]),
    ("id a list", "card.json", lambda: _card(id=["x"]), ["card.json", "'id'", "a list"]),
    ("max_length a string", "card.json", lambda: _card(max_length="512"), ["card.json", "'max_length'"]),
    ("training a list", "card.json", lambda: _card(training=[]), ["card.json", "'training'"]),
    ("tokenizer cut short", "tokenizer.json", lambda: _cut(TINY / "tokenizer.json", 1000), ["tokenizer.json"]),
    ("tokenizer not UTF-8", "tokenizer.json", lambda: b"\xff\xfe" + _cut(TINY / "tokenizer.json", 4000),
     ["tokenizer.json"]),
    ("graph cut short", "model.int8.onnx", lambda: _cut(TINY / "model.int8.onnx", 5000),
     ["model.int8.onnx", "cannot load this graph"]),
]


@pytest.fixture(scope="module")
def subset(tmp_path_factory):
    data = json.loads(DEV.read_text(encoding="utf-8"))
    path = tmp_path_factory.mktemp("ds") / "two.json"
    path.write_text(json.dumps({"version": data.get("version"), "data": data["data"][:2]}))
    return path


@pytest.mark.parametrize("case,name,content,expected", CASES, ids=[c[0] for c in CASES])
def test_a_damaged_model_directory_is_one_error_line(case, name, content, expected, subset, tmp_path, capsys,
                                                     monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model = tmp_path / "model"
    shutil.copytree(TINY, model)
    (model / name).write_bytes(content())
    _expect_one_error_line(model, name, expected, subset, tmp_path, capsys)


WEIGHTS = "model.int8.onnx.data0"


@pytest.mark.parametrize("damage,expected", [
    ("missing", [WEIGHTS, "missing", "model.int8.onnx cannot load"]),
    ("cut short", [WEIGHTS, "cut short", "10,000 of", "model.int8.onnx cannot load"]),
])
def test_a_damaged_external_weights_file_is_one_error_line_naming_it(damage, expected, subset, tmp_path, capsys,
                                                                     monkeypatch):
    # the shipped model keeps its weights beside the graph (model.int8.onnx.data0...): so does this copy
    onnx = pytest.importorskip("onnx")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model = tmp_path / "model"
    shutil.copytree(TINY, model)
    graph = onnx.load(str(model / "model.int8.onnx"))
    onnx.save(graph, str(model / "model.int8.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location=WEIGHTS, size_threshold=1024)
    weights = model / WEIGHTS
    assert weights.stat().st_size > 10_000
    if damage == "missing":
        weights.unlink()
    else:
        weights.write_bytes(weights.read_bytes()[:10_000])
    _expect_one_error_line(model, WEIGHTS, expected, subset, tmp_path, capsys)


def _expect_one_error_line(model, name, expected, subset, tmp_path, capsys):
    out = tmp_path / "pred.json"
    capsys.readouterr()
    code = main(["expmrc", "predict", str(subset), "-o", str(out), "--model", str(model), "--device", "cpu",
                 "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert err[-1].startswith("error: ") and str(model / name) in err[-1], err
    for words in expected:
        assert words.lower() in err[-1].lower(), (words, err[-1])
    assert not out.exists()
