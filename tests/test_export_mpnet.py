"""MPNet through the product's export and CPU layout (tiny random MPNet, real RACE dev items).

MPNet's attention adds a relative position bias, which ONNX Runtime's BERT optimizer does
not fuse into an `Attention` node: the graph keeps its attention as MatMul/Softmax with the
padding mask.  `inference.cpu_graph` must then leave the attention masked (no unpadded
layout), still replace SkipLayerNormalization, and the result must match PyTorch on
questions of other lengths and padding than the export's sample.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from inference import formatting  # noqa: E402
from models.export import onnx_export as E  # noqa: E402
from models.training.mc_model import HFEncoder, MultipleChoiceModel, default_backbone  # noqa: E402

DEV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "race" / "dev" / "middle"

pytestmark = pytest.mark.slow  # torch.onnx export of a 2-layer model: a few seconds


def _questions(n=6):
    out = []
    for f in sorted(DEV.glob("*.txt"), key=lambda p: int(p.stem))[:n]:
        r = json.loads(f.read_text(encoding="utf-8"))
        out.append((r["article"], r["questions"][0], r["options"][0]))
    return out


def test_unfused_mpnet_graph_keeps_its_mask_and_matches_pytorch(tmp_path):
    cfg = transformers.MPNetConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                   vocab_size=30522, max_position_embeddings=130)
    torch.manual_seed(0)
    model = MultipleChoiceModel(HFEncoder(transformers.AutoModel.from_config(cfg, add_pooling_layer=False)),
                                pooling="mean").eval()
    tok = formatting.load_tokenizer(default_backbone() / "tokenizer.json")
    qs = _questions()
    sample = formatting.encode_questions(tok, qs[:2], "shortcut", 24)
    E.export_onnx(model, tmp_path / "fp32.onnx", sample)
    fused = E.optimize(tmp_path / "fp32.onnx", tmp_path / "opt.onnx", 2, 32)
    assert "Attention" not in fused and "MultiHeadAttention" not in fused  # the relative position bias stays unfused
    layout = E.cpu_layout(tmp_path / "opt.onnx", tmp_path / "cpu.onnx")
    assert layout["multi_head_attention_unmasked"] == 0 and layout["unpadded"] is False
    assert layout["layernorm_from_skip_layernorm"] == fused.get("SkipLayerNormalization", 0)
    # other lengths and other padding than the sample's: standard (long, padded) and shortcut
    for fmt, length in (("standard", 128), ("shortcut", 40)):
        enc = formatting.encode_questions(tok, qs, fmt, length)
        assert len(set(enc.lengths.ravel().tolist())) > 1  # padding inside the batch
        ref = E.torch_logits(model, enc)
        for path in (tmp_path / "opt.onnx", tmp_path / "cpu.onnx"):
            got = E.onnx_logits(path, enc)
            assert float(np.max(np.abs(ref - got)[enc.option_mask])) < 1e-3, (fmt, path.name)
