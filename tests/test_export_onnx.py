"""models/export/onnx_export.py: faithful ONNX export (1e-3), dynamic axes, int8 agreement, typed errors."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import inference  # noqa: E402
from inference import formatting  # noqa: E402
from models.export import onnx_export as E  # noqa: E402
from models.export.tiny import TINY, dream_questions  # noqa: E402
from models.training.mc_model import build, default_backbone  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    return formatting.load_tokenizer(default_backbone() / "tokenizer.json")


@pytest.fixture(scope="module")
def dev(tokenizer):
    items = dream_questions("dev", 80)
    return formatting.encode_questions(tokenizer, [(p, s, a) for p, s, a, _ in items], formatting.SHORTCUT, 64)


@pytest.fixture(scope="module")
def exported(tmp_path_factory, tokenizer, dev):
    # mean pooling: a random model's options then differ by more than int8 rounding
    model = build(config=TINY, seed=1, pooling="mean").eval()
    out = tmp_path_factory.mktemp("model")
    card = inference.card.ModelCard(name="t", id="t-export", backbone="random", formats=["shortcut"], max_length=64,
                                    pooling="mean")
    card = E.write_model_dir(model, default_backbone() / "tokenizer.json", out, card, dev)
    return model, out, card


def test_export_matches_pytorch_and_int8_agrees(exported, dev):
    model, out, card = exported
    info = card.extra["export"]
    assert info["max_abs_diff_fp32"] <= 1e-3
    assert info["fused_operators"].get("Attention") == TINY.num_hidden_layers  # the classic pattern fused
    ref = E.torch_logits(model, dev)
    fp32 = E.onnx_logits(out / "model.onnx", dev)
    int8 = E.onnx_logits(out / "model.int8.onnx", dev)
    assert np.abs(ref - fp32)[dev.option_mask].max() <= 1e-3
    assert E.agreement(fp32, int8, dev.option_mask) >= 0.99
    assert json.loads((out / "card.json").read_text())["files"] == {"fp32": "model.onnx", "int8": "model.int8.onnx"}
    # the runtime, fed by the same formatting code, reproduces PyTorch's probabilities
    m = inference.load_model(out, device="cpu", precision="fp32")
    logits = m.runner.logits(dev)
    assert np.abs(logits - ref)[dev.option_mask].max() <= 1e-3


def test_dynamic_batch_option_and_token_axes(exported, tokenizer):
    model, out, _ = exported
    qs = [("A passage about a long walk in the rain.", "Where did they go _ ?", ["home", "out", "in", "up", "down"]),
          ("Short.", "Why?", ["a", "b", "c", "d", "e"]), ("x", "y", ["1", "2", "3", "4", "5"])]
    enc = formatting.encode_questions(tokenizer, qs, formatting.STANDARD, 64)
    got = E.onnx_logits(out / "model.onnx", enc)
    assert got.shape == (3, 5)
    assert np.abs(got - E.torch_logits(model, enc)).max() <= 1e-3


def test_a_corrupted_graph_fails_validation_with_a_typed_error(exported, dev, tmp_path):
    model, out, _ = exported
    g = onnx.load(str(out / "model.onnx"))
    target = max(g.graph.initializer, key=lambda t: "scorer" in t.name or t.name.endswith("bias"))
    arr = onnx.numpy_helper.to_array(target).copy()
    arr += 0.5  # a corrupted weight
    target.CopyFrom(onnx.numpy_helper.from_array(arr, target.name))
    bad = tmp_path / "bad.onnx"
    onnx.save(g, str(bad))
    with pytest.raises(E.ExportError, match="differ from PyTorch"):
        E.validate_fp32(model, bad, dev)
    truncated = tmp_path / "trunc.onnx"
    truncated.write_bytes((out / "model.onnx").read_bytes()[:3000])
    with pytest.raises(E.ExportError, match="cannot load"):
        E.validate_fp32(model, truncated, dev)
    assert issubclass(E.ExportError, inference.ModelError)


def test_int8_check_refuses_a_graph_that_disagrees(exported, dev):
    _, out, _ = exported
    with pytest.raises(E.ExportError, match="agree with fp32"):
        E.validate_int8(out / "model.onnx", out / "model.int8.onnx", dev, minimum=1.01)


def test_fully_quantized_graph_dequantizes_back_near_fp32(exported, dev, tmp_path):
    from inference.dequantize import dequantize_model

    _, out, _ = exported
    # an int8 graph as older exports wrote it: quantized fused attention (QAttention)
    E.quantize_int8(out / "model.onnx", tmp_path / "q.onnx", E.FULL_INT8, layout="as-is")
    q = onnx.load(str(tmp_path / "q.onnx"))
    assert {"MatMulInteger", "QAttention"} <= {n.op_type for n in q.graph.node}
    onnx.save(dequantize_model(q), str(tmp_path / "f.onnx"))
    fp32, back = E.onnx_logits(out / "model.onnx", dev), E.onnx_logits(tmp_path / "f.onnx", dev)
    assert E.agreement(fp32, back, dev.option_mask) >= 0.99
    assert np.abs(fp32 - back)[dev.option_mask].max() < 0.05


def test_ship_only_the_int8_graph(tokenizer, dev, tmp_path):
    model = build(config=TINY, seed=1, pooling="mean").eval()
    card = inference.card.ModelCard(name="t", id="t-int8", backbone="random", formats=["shortcut"], max_length=64,
                                    pooling="mean")
    E.write_model_dir(model, default_backbone() / "tokenizer.json", tmp_path, card, dev, ship=("int8",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.json", "model.int8.onnx", "tokenizer.json"]
    assert inference.card.load_card(tmp_path).files == {"int8": "model.int8.onnx"}
    with pytest.raises(E.ExportError, match="unbuilt"):
        E.write_model_dir(model, default_backbone() / "tokenizer.json", tmp_path, card, dev, ship=("fp16",))


def test_fp16_graph_for_the_gpu(exported, dev, tmp_path):
    _, out, _ = exported
    E.to_fp16(out / "model.onnx", tmp_path / "h.onnx")
    g = onnx.load(str(tmp_path / "h.onnx"))
    assert [i.type.tensor_type.elem_type for i in g.graph.input] == [onnx.TensorProto.INT64] * 3
    assert any(t.data_type == onnx.TensorProto.FLOAT16 for t in g.graph.initializer)
    assert (tmp_path / "h.onnx").stat().st_size < 0.6 * (out / "model.onnx").stat().st_size
    half, full = E.onnx_logits(tmp_path / "h.onnx", dev), E.onnx_logits(out / "model.onnx", dev)
    assert E.agreement(full, half, dev.option_mask) >= 0.95


def test_int8_export_is_in_the_cpu_layout(exported, dev, tmp_path):
    """QKV as quantized MatMuls beside an fp32 MultiHeadAttention without mask, LayerNorm for
    SkipLayerNormalization; marked unpadded, fed unpadded sequences, and it reproduces the
    fp32 graph's (padded) predictions; the card says what the int8 graph is."""
    from inference.cpu_graph import UNPADDED

    _, out, card = exported
    E.quantize_int8(out / "model.onnx", tmp_path / "q.onnx", E.FULL_INT8)  # the default layout: cpu
    ops = [n.op_type for n in onnx.load(str(tmp_path / "q.onnx")).graph.node]
    assert ops.count("MultiHeadAttention") == TINY.num_hidden_layers and "QAttention" not in ops
    assert ops.count("MatMulInteger") >= 3 * TINY.num_hidden_layers  # Q, K, V of every layer quantized
    # the shipped int8 graph (this random model's full quantization missed 99%: embeddings only)
    g = onnx.load(str(out / "model.int8.onnx"))
    ops = [n.op_type for n in g.graph.node]
    assert ops.count("MultiHeadAttention") == TINY.num_hidden_layers
    assert "QAttention" not in ops and "Attention" not in ops and "SkipLayerNormalization" not in ops
    assert all(len(n.input) <= 4 for n in g.graph.node if n.op_type == "MultiHeadAttention")  # no mask
    assert {p.key: p.value for p in g.metadata_props}[UNPADDED] == "1"
    info = card.extra["export"]
    assert info["fused_operators"]["Attention"] == TINY.num_hidden_layers  # the fp32 graph: fused, padded
    assert info["int8_layout"]["attention"] == TINY.num_hidden_layers and info["int8_layout"]["unpadded"]
    fp32 = onnx.load(str(out / "model.onnx"))
    assert [n.op_type for n in fp32.graph.node].count("Attention") == TINY.num_hidden_layers
    # the runtime runs the shipped CPU-layout graph as it is, on unpadded sequences
    m = inference.load_model(out, device="cpu", precision="int8")
    assert m.runner.unpadded and m.runner.graph_file == "model.int8.onnx"
    got = m.runner.logits(dev)
    ref = E.onnx_logits(out / "model.onnx", dev)
    assert E.agreement(ref, np.where(np.isfinite(got), got, 0), dev.option_mask) >= 0.99


def test_cpu_layout_int8_gives_a_padded_gpu_graph(exported, dev, tmp_path, monkeypatch):
    """An int8-only model in the CPU layout: the fp16 graph derived for the GPU gets its
    attention mask back, so padded batches (what the GPU runs) score right."""
    from inference.cpu_graph import is_unpadded
    from inference.gpu_graph import derive_fp16

    _, out, _ = exported
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    d = tmp_path / "m"
    d.mkdir()
    for f in ("model.int8.onnx", "tokenizer.json"):
        (d / f).write_bytes((out / f).read_bytes())
    card = inference.card.load_card(out)
    card.files = {"int8": "model.int8.onnx"}
    card.id = "t-int8-cpu"
    card.save(d)
    half = derive_fp16(d, card)
    g = onnx.load(str(half))
    assert not is_unpadded(g)
    assert all(len(n.input) > 4 and n.input[4] for n in g.graph.node if n.op_type == "MultiHeadAttention")
    padded = E.onnx_logits(half, dev)  # padded batches, as on the GPU
    assert E.agreement(E.onnx_logits(out / "model.onnx", dev), padded, dev.option_mask) >= 0.95
