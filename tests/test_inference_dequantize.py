"""An int8-only model gets a float (and fp16) graph for the GPU from its dequantized weights."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import inference  # noqa: E402
from inference import formatting  # noqa: E402
from inference.dequantize import dequantize_model  # noqa: E402
from inference.gpu_graph import derive_fp16  # noqa: E402

TINY = Path(__file__).parent / "data" / "tiny_model"
DREAM = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "dream" / "dev.json"


@pytest.fixture(scope="module")
def dev():
    tok = formatting.load_tokenizer(TINY / "tokenizer.json")
    items = []
    for turns, qs, _ in json.loads(DREAM.read_text(encoding="utf-8"))[:40]:
        items += [("\n".join(turns), q["question"], q["choice"]) for q in qs]
    return formatting.encode_questions(tok, items, formatting.STANDARD, 256)


def _logits(path, enc):
    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    return np.where(enc.option_mask, s.run(["logits"], enc.feeds(names))[0].astype(np.float64), -np.inf)


def test_dequantized_graph_has_no_integer_ops_and_reproduces_int8(dev, tmp_path):
    q = onnx.load(str(TINY / "model.int8.onnx"))
    f = dequantize_model(q)
    ops = {n.op_type for n in f.graph.node}
    assert not ops & {"DynamicQuantizeLinear", "MatMulInteger", "QAttention", "DequantizeLinear"}
    onnx.save(f, str(tmp_path / "f.onnx"))
    a, b = _logits(TINY / "model.int8.onnx", dev), _logits(tmp_path / "f.onnx", dev)
    # the same int8 weights in float arithmetic: the same predictions, nearly the same logits
    assert (a.argmax(1) == b.argmax(1)).mean() >= 0.99
    assert np.abs(a - b)[dev.option_mask].max() < 0.05


def test_fp16_derived_once_and_cached(dev, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    d = tmp_path / "m"
    shutil.copytree(TINY, d)
    card = inference.card.load_card(d)
    path = derive_fp16(d, card)
    assert path.is_file() and path.is_relative_to(tmp_path / "cache")
    assert sorted(p.name for p in d.iterdir()) == sorted(p.name for p in TINY.iterdir())  # model dir untouched
    mtime = path.stat().st_mtime_ns
    assert derive_fp16(d, card).stat().st_mtime_ns == mtime  # reused, not rebuilt
    half = _logits(path, dev)
    full = _logits(TINY / "model.int8.onnx", dev)
    assert (half.argmax(1) == full.argmax(1)).mean() >= 0.95


def test_gpu_path_without_a_gpu_falls_back_with_the_reason(dev, tmp_path, monkeypatch):
    """The CUDA branch as far as it runs without a GPU: the int8-only model gets its fp16
    graph derived, ONNX Runtime places it on the CPU, and the message says so."""
    from inference import session

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(session, "choose_provider",
                        lambda device: ("CUDAExecutionProvider", "CUDA: onnxruntime-gpu is installed"))
    m = inference.load_model(TINY, device="cuda")
    assert m.runner.precision == "fp16" and m.runner.provider == "CPUExecutionProvider"
    assert "no usable GPU" in m.message and "using the CPU" in m.message
    cpu = inference.load_model(TINY, device="cpu")
    a, b = m.runner.logits(dev), cpu.runner.logits(dev)
    assert (a.argmax(1) == b.argmax(1)).mean() >= 0.95
