"""The CPU layout (inference.cpu_graph) on real ExpMRC questions: the same logits as the
shipped graph on padded batches, a cache that is reused and rebuilt, fallbacks with a reason."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import inference  # noqa: E402
from inference import cpu_graph, formatting  # noqa: E402
from inference.card import load_card  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_model"
EXPMRC = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MCQLENS_THREADS", raising=False)
    monkeypatch.delenv("MCQLENS_CPU_LAYOUT", raising=False)
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def items():
    """(passage, stem, alternatives) of ExpMRC RACE+ dev, in file order."""
    out = []
    for p in json.loads(EXPMRC.read_text(encoding="utf-8"))["data"]:
        out += [(p["article"], s, o) for s, o in zip(p["questions"], p["options"])]
    return out


def padded_logits(path, enc):
    """The shipped graph as it always ran: one padded [B, O, T] batch, no rewrite."""
    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    return np.where(enc.option_mask, s.run(["logits"], enc.feeds(names))[0].astype(np.float64), -np.inf)


def encode(model_dir, items, fmt):
    card = load_card(model_dir)
    tok = formatting.load_tokenizer(model_dir / card.tokenizer)
    return formatting.encode_questions(tok, items, fmt, card.max_length)


def same(a, b, mask, atol=1e-4):
    assert np.isneginf(a[~mask]).all() and np.isneginf(b[~mask]).all()
    return float(np.abs(a[mask] - b[mask]).max()) <= atol


def test_tiny_model_cpu_layout_gives_the_padded_logits(items):
    m = inference.load_model(TINY, device="cpu")
    assert m.runner.unpadded and m.runner.graph_file == "model.int8.cpu-v1.onnx"
    assert "CPU layout derived from model.int8.onnx" in m.message
    assert "2 Attention -> MatMul + MultiHeadAttention without mask" in m.message
    assert "4 SkipLayerNormalization -> Add + LayerNormalization" in m.message
    g = onnx.load(str(Path(os.environ["XDG_CACHE_HOME"]) / "mcqlens" / "tiny-bert-2x32" / m.runner.graph_file))
    ops = [n.op_type for n in g.graph.node]
    assert ops.count("MultiHeadAttention") == 2 and not {"Attention", "SkipLayerNormalization"} & set(ops)
    # 60 questions in one batch, both formats: standard sequences all reach the tiny model's
    # 256 tokens (equal lengths share runs), shortcut ones have many lengths
    for fmt, n_lengths in (("standard", 1), ("shortcut", 20)):
        enc = encode(TINY, items[:60], fmt)
        assert len(set(enc.lengths[enc.option_mask].tolist())) >= n_lengths
        assert same(m.runner.logits(enc), padded_logits(TINY / "model.int8.onnx", enc), enc.option_mask)


def test_one_run_at_a_time_and_the_thread_setting(items, monkeypatch):
    enc = encode(TINY, items[:12], "standard")
    ref = padded_logits(TINY / "model.int8.onnx", enc)
    one = inference.load_model(TINY, device="cpu", threads=1)
    assert one.runner.workers == 1 and one.runner.pool is None and "1 run at a time" in one.message
    assert same(one.runner.logits(enc), ref, enc.option_mask)
    monkeypatch.setenv("MCQLENS_THREADS", "3")
    three = inference.load_model(TINY, device="cpu")
    assert three.runner.workers == 3 and "3 concurrent runs of 1 thread" in three.message
    assert same(three.runner.logits(enc), ref, enc.option_mask)


def test_cache_is_reused_and_rebuilt_when_the_source_changes(tmp_path, cache):
    d = tmp_path / "m"
    shutil.copytree(TINY, d)
    card = load_card(d)
    path, summary, unpadded = cpu_graph.derive(d / "model.int8.onnx", card)
    assert path.parent == cache / "mcqlens" / "tiny-bert-2x32" and unpadded and "2 Attention" in summary
    assert sorted(p.name for p in d.iterdir()) == sorted(p.name for p in TINY.iterdir())  # model dir untouched
    assert not list(path.parent.glob("*.partial"))
    built = path.stat().st_mtime_ns
    again, _, _ = cpu_graph.derive(d / "model.int8.onnx", card)
    assert again == path and path.stat().st_mtime_ns == built  # reused
    # the source is replaced by a newer file: rebuilt
    src = d / "model.int8.onnx"
    src.write_bytes(src.read_bytes())
    os.utime(src, ns=(built + 10**9, built + 10**9))
    cpu_graph.derive(src, card)
    assert path.stat().st_mtime_ns != built
    # another directory's model with the same id (and an older file): not served the first one's graph
    rebuilt = path.stat().st_mtime_ns
    other = tmp_path / "other"
    shutil.copytree(TINY, other)
    os.utime(other / "model.int8.onnx", ns=(1, 1))
    cpu_graph.derive(other / "model.int8.onnx", card)
    assert path.stat().st_mtime_ns != rebuilt
    stamp = json.loads(path.with_suffix(".json").read_text())
    assert stamp["source"] == str((other / "model.int8.onnx").resolve())


def test_quantized_attention_keeps_its_mask_and_gets_the_layernorm_change(items, tmp_path):
    """An older dynamic-int8 export (QAttention) cannot drop its mask: the graph stays
    padded, only SkipLayerNormalization is rewritten, and the logits do not change."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from inference.dequantize import dequantize_model

    d = tmp_path / "q"
    d.mkdir()
    onnx.save(dequantize_model(onnx.load(str(TINY / "model.int8.onnx"))), str(tmp_path / "f.onnx"))
    quantize_dynamic(str(tmp_path / "f.onnx"), str(d / "model.int8.onnx"), weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    assert "QAttention" in {n.op_type for n in onnx.load(str(d / "model.int8.onnx")).graph.node}
    shutil.copy(TINY / "tokenizer.json", d / "tokenizer.json")
    card = json.loads((TINY / "card.json").read_text())
    card["id"] = "tiny-qattention"
    (d / "card.json").write_text(json.dumps(card))
    m = inference.load_model(d, device="cpu")
    assert not m.runner.unpadded
    assert "attention kept masked: QAttention" in m.message and "4 SkipLayerNormalization" in m.message
    enc = encode(d, items[:30], "standard")
    assert same(m.runner.logits(enc), padded_logits(d / "model.int8.onnx", enc), enc.option_mask)


def test_a_failed_derivation_falls_back_to_the_shipped_graph_with_the_reason(items, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    m = inference.load_model(TINY, device="cpu")
    assert m.runner.graph_file == "model.int8.onnx" and not m.runner.unpadded
    assert "CPU layout not derived (" in m.message and "the shipped graph runs as it is" in m.message
    enc = encode(TINY, items[:10], "shortcut")
    assert same(m.runner.logits(enc), padded_logits(TINY / "model.int8.onnx", enc), enc.option_mask)
    # a derived graph ONNX Runtime cannot load: the shipped graph, and the message says so
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache2"))
    monkeypatch.setattr(cpu_graph, "derive",
                        lambda source, card, rebuild=False: (_broken(tmp_path), "a broken rewrite", True))
    m = inference.load_model(TINY, device="cpu")
    assert m.runner.graph_file == "model.int8.onnx" and "CPU layout not used" in m.message
    monkeypatch.setenv("MCQLENS_CPU_LAYOUT", "0")
    m = inference.load_model(TINY, device="cpu")
    assert m.runner.graph_file == "model.int8.onnx" and "switched off" in m.message


def test_a_damaged_cached_graph_is_rebuilt_once(items, tmp_path, monkeypatch):
    """A cached CPU-layout graph cut short (a full disk, a copy interrupted) is derived
    again and replaced, not reported on every run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = inference.load_model(TINY, device="cpu")
    cached = cpu_graph.cache_folder(first.card) / first.runner.graph_file
    assert cached.is_file() and first.runner.unpadded
    good = cached.read_bytes()
    cached.write_bytes(good[: len(good) // 3])
    again = inference.load_model(TINY, device="cpu")
    assert again.runner.graph_file == cached.name and again.runner.unpadded
    assert "the cached graph was damaged and is rebuilt" in again.message
    assert "CPU layout not used" not in again.message
    assert cached.stat().st_size == len(good)
    assert not list(cached.parent.glob("*.partial"))  # written through a temporary file, renamed
    third = inference.load_model(TINY, device="cpu")
    assert "damaged" not in third.message and third.runner.graph_file == cached.name
    enc = encode(TINY, items[:10], "standard")
    assert same(third.runner.logits(enc), padded_logits(TINY / "model.int8.onnx", enc), enc.option_mask)


def _broken(tmp_path) -> Path:
    p = tmp_path / "broken.onnx"
    p.write_bytes((TINY / "model.int8.onnx").read_bytes()[:4000])
    return p


def test_padded_gives_back_a_graph_for_padded_batches(items, tmp_path):
    """What the GPU gets from a CPU-layout graph: a key padding mask for every attention."""
    conv = cpu_graph.to_cpu_layout(onnx.load(str(TINY / "model.int8.onnx")))
    assert conv.unpadded and cpu_graph.is_unpadded(conv.model)
    back = cpu_graph.padded(conv.model)
    assert not cpu_graph.is_unpadded(back)
    onnx.save(back, str(tmp_path / "p.onnx"))
    enc = encode(TINY, items[:30], "standard")
    assert same(padded_logits(tmp_path / "p.onnx", enc), padded_logits(TINY / "model.int8.onnx", enc),
                enc.option_mask)
    # and nothing to rewrite in a graph already in the CPU layout
    again = cpu_graph.to_cpu_layout(conv.model)
    assert not again.changed and again.unpadded and again.summary() == cpu_graph.NOTHING


def test_a_repeated_sequence_is_encoded_once(items):
    """NOTA questions of one passage: every cloze stem's NOTA alternative is the same
    sequence (passage + NOTA text).  Scored in one call, each distinct sequence runs once
    and every question gets the logits it gets alone."""
    from desktop.domain import nota
    from desktop.domain.model import Question

    data = json.loads(EXPMRC.read_text(encoding="utf-8"))["data"]
    p = next(p for p in data if sum("_" in s for s in p["questions"]) >= 3)
    qs = [Question(id=f"q{j}", passage_id="p", index=j, stem=s, alternatives=list(o) + [nota.NOTA_TEXT], key=None)
          for j, (s, o) in enumerate(zip(p["questions"], p["options"]))]
    m = inference.load_model(TINY, device="cpu")
    ran = []
    real = m.runner.logits
    m.runner.logits = lambda enc: ran.append(int(enc.option_mask.sum())) or real(enc)
    nota_at = [len(q.alternatives) - 1 for q in qs]
    # evidence=None: the count is of the answer sequences (evidence occlusion re-scores others)
    together = inference.score(m, qs + qs[:1], {"p": p["article"]}, ["standard"], nota_indices=nota_at + nota_at[:1],
                               evidence=None)
    n_seqs = sum(len(q.alternatives) for q in qs)
    cloze = sum("_" in q.stem for q in qs)
    assert sum(ran) <= n_seqs - (cloze - 1)  # the shared NOTA sequence once, the repeated question not at all
    for q, ni, r in zip(qs + qs[:1], nota_at + nota_at[:1], together):
        (alone,) = inference.score(m, [q], {"p": p["article"]}, ["standard"], nota_indices=[ni])
        assert np.allclose(alone.formats["standard"].logits, r.formats["standard"].logits, atol=1e-5)
