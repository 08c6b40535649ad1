"""The shipped model's file layout, on a tiny random MPNet exported through the same code.

`models.shipping.gpu_ship` writes the reader as `models.export.mpnet_onnx` builds it (MultiHeadAttention with
MPNet's relative position bias, no padding mask: the CPU runs one sequence at a time),
int8 weights rebuilt by DequantizeLinear (`quantize(..., "weights")`), and its weights as ONNX
external data in several files (`save_split`).  Such a directory, loaded by the runtime, must
compute what PyTorch computes on real RACE dev questions, and its derived GPU graph (fp16,
with a padding mask) must predict what the int8 graph predicts.  The tiny model keeps this
fast; the shipped model itself is checked lightly in tests/test_shipped_model.py."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import inference  # noqa: E402
from inference import formatting  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
# bytes per external data file: the tiny model's weights in several files, as the shipped model's
# 110 MB are in 8 (the largest tensor, half the word embeddings, must fit in one)
PART = {"fp32": 3_200_000, "int8": 800_000}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build(tmp_path_factory.mktemp("mpnet-files"))


def build(root: Path):
    """(PyTorch model, fp32 directory, int8 directory) of a 2-layer, 48-wide MPNet reader."""
    from models.export import external_data, mpnet_int8, mpnet_onnx
    from models.training.mc_model import MultipleChoiceModel, default_backbone
    from models.training.mpnet import MPNetConfig, MPNetEncoder

    torch.manual_seed(0)
    cfg = MPNetConfig(vocab_size=30522, hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=96)
    model = MultipleChoiceModel(MPNetEncoder(cfg), pooling="mean").eval()
    with torch.no_grad():  # a non-zero position bias and scorer, so that both are checked
        model.encoder.encoder.relative_attention_bias.weight.normal_(0, 1.0)
        model.scorer.weight.normal_(0, 1.0)
    config = {**model.encoder.config_dict(), "pooling": "mean"}
    fp32 = mpnet_onnx.build(mpnet_onnx.state_arrays(model), config, "mean")
    dirs = {}
    for precision, graph in (("fp32", fp32), ("int8", mpnet_int8.quantize(fp32, "weights"))):
        d = root / precision
        name = f"model.{'int8.' if precision == 'int8' else ''}onnx"
        files = external_data.save_split(graph, d, name, part_bytes=PART[precision])
        (d / "tokenizer.json").write_bytes((default_backbone() / "tokenizer.json").read_bytes())
        card = {"name": f"tiny MPNet ({precision})", "id": f"tiny-mpnet-{precision}",
                "backbone": "random 2-layer MPNet", "formats": ["standard", "shortcut"], "max_length": 512,
                "temperature": {"standard": 1.0, "shortcut": 1.0}, "files": {precision: name},
                "inputs": ["input_ids", "attention_mask"], "pooling": "mean",
                "quantization": {"recipe": "weights" if precision == "int8" else None, "files": files}}
        (d / "card.json").write_text(json.dumps(card), encoding="utf-8")
        dirs[precision] = d
    return model, dirs["fp32"], dirs["int8"]


def _questions(n=4):
    from models.training.dedup import read_race

    return [(p.article, p.questions[0], p.options[0]) for p in read_race(DATA / "race", "dev")[:n]]


def _torch_logits(model, enc) -> np.ndarray:
    with torch.no_grad():
        z = model(torch.from_numpy(enc.input_ids), torch.from_numpy(enc.attention_mask)).double().numpy()
    return np.where(enc.option_mask, z, -np.inf)


def test_weights_are_external_data_in_several_files_each_within_its_size(tiny):
    _, _, int8 = tiny
    card = json.loads((int8 / "card.json").read_text())
    data = sorted(p.name for p in int8.iterdir() if ".onnx.data" in p.name)
    assert data == sorted(f for f in card["quantization"]["files"] if ".data" in f) and len(data) >= 2
    assert all((int8 / f).stat().st_size <= PART["int8"] for f in data)
    graph = onnx.load(str(int8 / "model.int8.onnx"), load_external_data=False)
    ops = [n.op_type for n in graph.graph.node]
    assert ops.count("MultiHeadAttention") == 2 and "DequantizeLinear" in ops


@pytest.mark.parametrize("fmt", ["standard", "shortcut"])
def test_the_runtime_computes_what_pytorch_computes(tiny, fmt):
    model, fp32, int8 = tiny
    m32, m8 = (inference.load_model(d, device="cpu") for d in (fp32, int8))
    assert m32.runner.unpadded and m8.runner.unpadded  # one sequence at a time: no mask in the graph
    enc = formatting.encode_questions(m32.tokenizer, _questions(8), fmt, 512)
    assert len(set(enc.lengths[enc.option_mask].tolist())) > 1  # sequences of several lengths, padded for PyTorch
    ref = _torch_logits(model, enc)
    got32, got8 = m32.runner.logits(enc), m8.runner.logits(enc)
    mask = enc.option_mask
    assert np.abs(got32[mask] - ref[mask]).max() < 1e-4
    # int8 weights, float arithmetic: close to float32, and the same prediction wherever float32's
    # is not a near tie (a random reader hardly tells apart four alternatives that share a long
    # passage, so the standard format's ties are many; the shortcut format's are few)
    assert np.abs(got8[mask] - ref[mask]).max() < 0.1
    top2 = np.sort(ref, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 0.2
    assert (got8.argmax(1) == ref.argmax(1))[clear].all()
    assert fmt == "standard" or clear.sum() >= 3


def test_the_gpu_graph_derived_from_the_int8_files_is_plain_fp16_with_a_mask(tiny, tmp_path, monkeypatch):
    from inference.card import load_card
    from inference.gpu_graph import derive_fp16

    _, _, int8 = tiny
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = derive_fp16(int8, load_card(int8))
    assert path.is_relative_to(tmp_path / "cache")
    g = onnx.load(str(path)).graph
    assert {onnx.TensorProto.DataType.Name(t.data_type) for t in g.initializer if len(t.dims) == 2} == {"FLOAT16"}
    assert "DequantizeLinear" not in {n.op_type for n in g.node}
    attention = [n for n in g.node if n.op_type == "MultiHeadAttention"]
    assert len(attention) == 2 and all(len(n.input) > 4 and n.input[4] for n in attention)  # key padding mask
    # padded batches, as a GPU runs them (here on the CPU provider): the int8 files' predictions
    cpu = inference.load_model(int8, device="cpu")
    enc = formatting.encode_questions(cpu.tokenizer, _questions(8), "shortcut", 512)
    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    half = s.run(["logits"], enc.feeds([i.name for i in s.get_inputs()]))[0].astype(np.float64)
    full = cpu.runner.logits(enc)
    mask = enc.option_mask
    assert np.abs(half[mask] - full[mask]).max() < 0.05
    top2 = np.sort(full, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 0.1
    assert clear.sum() >= 3 and (np.where(mask, half, -np.inf).argmax(1) == full.argmax(1))[clear].all()
