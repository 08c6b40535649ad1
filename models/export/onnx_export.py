"""Export a multiple-choice model to ONNX, validate it, quantize it, write a model directory.

Steps (each validated, each failure a typed `ExportError`):

1. torch → ONNX (opset 17, TorchScript exporter) with dynamic batch, option and token
   axes: inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` [B, O, T] int64,
   output ``logits`` [B, O].
2. ONNX Runtime's transformer optimizer fuses attention / LayerNorm / GELU (the model's
   encoder follows the classic BERT pattern so the fusions apply); the fused node counts
   are recorded.  The fp32 graph must match PyTorch within 1e-3 (max abs logit).
3. int8: dynamic quantization (onnxruntime.quantization) of the fp32 graph in its CPU
   layout (`inference.cpu_graph`: Q, K and V become plain MatMuls — so quantized
   MatMuls — beside an fp32 MultiHeadAttention without mask, which takes ONNX Runtime's
   flash-attention path; LayerNorm instead of SkipLayerNormalization); such a graph is
   fed unpadded sequences (its metadata says so, the runtime and `onnx_logits` obey).
   Its predicted option must agree with fp32 on >= 99% of the validation questions.
   The fp32 graph keeps the fused, padded layout: it is what a GPU graph is derived
   from, and the runtime derives its CPU layout when it runs it on a CPU.
4. fp16 (GPU): weights in half precision, inputs/outputs kept in their types.

`write_model_dir` writes the graphs, the tokenizer and `card.json`.
"""
from __future__ import annotations

import datetime as _dt
import json
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from desktop.domain.errors import ModelError
from inference.card import ModelCard
from inference.cpu_graph import DISABLED_OPTIMIZERS, LAYOUT, UNPADDED, to_cpu_layout
from inference.formatting import CLOZE_RULE, TRUNCATION_RULE, Encoded
from inference.unpadded import graph_is_unpadded, unpadded_logits

OPSET = 17
INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
MAX_ABS_DIFF = 1e-3
MIN_INT8_AGREEMENT = 0.99
FILES = {"fp32": "model.onnx", "int8": "model.int8.onnx", "fp16": "model.fp16.onnx"}


class ExportError(ModelError):
    """An exported graph does not reproduce the PyTorch model (or cannot be written)."""


def export_onnx(model, path: str | Path, sample: Encoded) -> Path:
    """Plain torch → ONNX export with dynamic [batch, options, tokens] axes."""
    import torch

    path = Path(path)
    model = model.eval()
    args = tuple(torch.from_numpy(a) for a in (sample.input_ids, sample.attention_mask, sample.token_type_ids))
    axes = {n: {0: "batch", 1: "options", 2: "tokens"} for n in INPUTS}
    axes["logits"] = {0: "batch", 1: "options"}
    try:
        with torch.no_grad():
            torch.onnx.export(model, args, str(path), input_names=INPUTS, output_names=["logits"],
                              dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True,
                              dynamo=False)
    except Exception as exc:  # torch raises many kinds; the caller needs one
        raise ExportError(f"torch could not export the model to ONNX: {exc}") from exc
    return path


def optimize(path_in: str | Path, path_out: str | Path, num_heads: int, hidden_size: int) -> dict[str, int]:
    """ONNX Runtime's offline BERT fusions; returns the fused operator counts."""
    from onnxruntime.transformers.optimizer import optimize_model

    opt = optimize_model(str(path_in), model_type="bert", num_heads=num_heads, hidden_size=hidden_size,
                         opt_level=0)
    counts = opt.get_fused_operator_statistics()
    opt.save_model_to_file(str(path_out))
    return {k: int(v) for k, v in counts.items() if v}


def torch_logits(model, enc: Encoded, batch: int = 16) -> np.ndarray:
    import torch

    model = model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(enc.input_ids), batch):
            args = [torch.from_numpy(a[i:i + batch]) for a in (enc.input_ids, enc.attention_mask, enc.token_type_ids)]
            out.append(model(*args).float().numpy())
    return np.concatenate(out)


def onnx_logits(path: str | Path, enc: Encoded, batch: int = 16) -> np.ndarray:
    """[B, O] logits of a graph on the CPU; a graph in the CPU layout gets unpadded sequences."""
    import onnxruntime as ort

    try:
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"],
                                    disabled_optimizers=DISABLED_OPTIMIZERS)
    except Exception as exc:
        raise ExportError(f"{path}: ONNX Runtime cannot load the exported graph: {exc}") from exc
    names = [i.name for i in sess.get_inputs()]
    try:
        if graph_is_unpadded(sess):
            return unpadded_logits(lambda feeds: sess.run(["logits"], feeds)[0], enc, names)
        out = []
        for i in range(0, len(enc.input_ids), batch):
            feeds = {n: a[i:i + batch] for n, a in enc.feeds(names).items()}
            out.append(sess.run(["logits"], feeds)[0].astype(np.float32))
    except Exception as exc:
        raise ExportError(f"{path}: the exported graph fails on the validation inputs: {exc}") from exc
    return np.concatenate(out)


def validate_fp32(model, path: str | Path, enc: Encoded, atol: float = MAX_ABS_DIFF) -> float:
    """Max abs difference of logits, ONNX vs PyTorch; ExportError beyond `atol`."""
    ref, got = torch_logits(model, enc), onnx_logits(path, enc)
    if ref.shape != got.shape:
        raise ExportError(f"{path}: logits shape {got.shape} differs from PyTorch's {ref.shape}")
    diff = float(np.max(np.abs(ref - got)[enc.option_mask]))
    if not diff <= atol:
        raise ExportError(f"{path}: logits differ from PyTorch by {diff:.3g} (allowed {atol:g}); "
                          "the export is not faithful")
    return diff


def agreement(logits_a: np.ndarray, logits_b: np.ndarray, option_mask: np.ndarray) -> float:
    """Share of questions whose predicted option is the same."""
    a = np.where(option_mask, logits_a, -np.inf).argmax(1)
    b = np.where(option_mask, logits_b, -np.inf).argmax(1)
    return float(np.mean(a == b))


FULL_INT8 = None  # every op type onnxruntime can quantize dynamically (MatMul, Attention, Gather)
EMBEDDING_INT8 = ("Gather",)  # only the embedding tables: small files, fp32 arithmetic


def cpu_layout(fp32_path: str | Path, out_path: str | Path) -> dict:
    """The graph in its CPU layout (`inference.cpu_graph`); returns what was rewritten."""
    import onnx

    try:
        conv = to_cpu_layout(onnx.load(str(fp32_path)))
        onnx.save(conv.model, str(out_path))
    except Exception as exc:
        raise ExportError(f"{fp32_path}: cannot rewrite the graph into its CPU layout: {exc}") from exc
    return {"multi_head_attention_unmasked": conv.attention, "layernorm_from_skip_layernorm": conv.skip_layernorm,
            "unpadded": conv.unpadded, "kept": sorted(set(conv.kept))}


def quantize_int8(fp32_path: str | Path, int8_path: str | Path, op_types=FULL_INT8, layout: str = "cpu") -> Path:
    """Dynamic int8 of the fp32 graph; `layout="cpu"` quantizes its CPU layout (the
    default: the int8 graph is for CPUs), `"as-is"` the graph as it is (e.g. fused
    Attention → QAttention, which keeps the padding mask)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if layout not in ("cpu", "as-is"):
        raise ValueError(f"layout must be 'cpu' or 'as-is', not {layout!r}")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(fp32_path)
        if layout == "cpu":
            source = Path(tmp) / "cpu.onnx"
            cpu_layout(fp32_path, source)
        try:
            # contrib ops (Attention, MultiHeadAttention, SkipLayerNormalization) defeat shape
            # inference: their outputs are float, say so
            quantize_dynamic(str(source), str(int8_path), weight_type=QuantType.QInt8,
                             op_types_to_quantize=list(op_types) if op_types else None,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        except Exception as exc:
            raise ExportError(f"{fp32_path}: dynamic int8 quantization failed: {exc}") from exc
        if layout == "cpu":
            _copy_metadata(source, int8_path)
    return Path(int8_path)


def _copy_metadata(source: Path, target: str | Path) -> None:
    """The CPU-layout marks (`mcqlens.*` metadata) onto the quantized graph, if it lost them."""
    import onnx

    marks = {p.key: p.value for p in onnx.load(str(source), load_external_data=False).metadata_props
             if p.key in (LAYOUT, UNPADDED)}
    model = onnx.load(str(target))
    have = {p.key: p.value for p in model.metadata_props}
    if all(have.get(k) == v for k, v in marks.items()):
        return
    keep = [p for p in model.metadata_props if p.key not in marks]
    del model.metadata_props[:]
    model.metadata_props.extend(keep)
    for k, v in marks.items():
        p = model.metadata_props.add()
        p.key, p.value = k, v
    onnx.save(model, str(target))


def graph_layout(path: str | Path) -> dict | None:
    """What `inference.cpu_graph` rewrote in a graph (its metadata), None for a graph as exported."""
    import onnx

    meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    if LAYOUT not in meta:
        return None
    return {**json.loads(meta[LAYOUT]), "unpadded": meta.get(UNPADDED) == "1"}


def validate_int8(fp32_path, int8_path, enc: Encoded, minimum: float = MIN_INT8_AGREEMENT) -> float:
    agree = agreement(onnx_logits(fp32_path, enc), onnx_logits(int8_path, enc), enc.option_mask)
    if agree < minimum:
        raise ExportError(f"{int8_path}: int8 predictions agree with fp32 on {agree:.1%} of the "
                          f"validation questions (needed {minimum:.0%})")
    return agree


def to_fp16(fp32_path: str | Path, fp16_path: str | Path) -> Path:
    """Half-precision weights for GPU; graph inputs and outputs keep their types."""
    import onnx
    from onnxruntime.transformers.onnx_model import OnnxModel

    m = OnnxModel(onnx.load(str(fp32_path)))
    m.convert_float_to_float16(keep_io_types=True)
    m.save_model_to_file(str(fp16_path))
    return Path(fp16_path)


def write_model_dir(model, tokenizer_path: str | Path, out_dir: str | Path, card: ModelCard,
                    validation: Encoded, precisions: Sequence[str] = ("fp32", "int8"),
                    optimize_graph: bool = True, ship: Sequence[str] | None = None) -> ModelCard:
    """Export, validate and write a complete model directory; returns the written card.

    `validation` are real questions tokenized with `inference.formatting`; they check
    the fp32 export (1e-3) and the int8 agreement (99%).  Any failure leaves `out_dir`
    untouched.  `ship` names the graphs written (default: all of `precisions`), e.g.
    ("int8",) for a small model whose GPU graph the runtime derives from the int8 one.
    """
    out_dir = Path(out_dir)
    ship = list(ship or precisions)
    bad = [p for p in list(precisions) + ship if p not in FILES or p not in precisions]
    if bad or not precisions:
        raise ExportError(f"unknown or unbuilt precision(s) {bad}; choose among {', '.join(FILES)} "
                          "and ship only what is built")
    cfg = model.config
    report: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        raw = export_onnx(model, tmp / "raw.onnx", _small(validation))
        fp32 = tmp / FILES["fp32"]
        if optimize_graph:
            report["fused_operators"] = optimize(raw, fp32, cfg.num_attention_heads, cfg.hidden_size)
        else:
            shutil.copy(raw, fp32)
        report["max_abs_diff_fp32"] = validate_fp32(model, fp32, validation)
        if "int8" in precisions:
            report.update(_int8(fp32, tmp / FILES["int8"], validation))
        if "fp16" in precisions:
            to_fp16(fp32, tmp / FILES["fp16"])
        report["validation_questions"] = int(len(validation.input_ids))
        out_dir.mkdir(parents=True, exist_ok=True)
        files = {}
        for p in ship:
            shutil.copy(tmp / FILES[p], out_dir / FILES[p])
            files[p] = FILES[p]
    shutil.copy(tokenizer_path, out_dir / "tokenizer.json")
    card.files = files
    card.tokenizer = "tokenizer.json"
    card.inputs = list(INPUTS)
    card.truncation, card.cloze = TRUNCATION_RULE, CLOZE_RULE
    card.created = card.created or _dt.date.today().isoformat()
    card.extra["export"] = {"opset": OPSET, **report}
    card.save(out_dir)
    return card


def _int8(fp32: Path, int8: Path, validation: Encoded) -> dict:
    """Full dynamic quantization; when its argmax agreement misses 99% (a model with
    small margins between options: activation rounding flips them), quantize only the
    embedding tables, whose rounding error is shared by all options.  ExportError when
    neither agrees."""
    quantize_int8(fp32, int8, FULL_INT8)
    try:
        return {"int8_agreement": validate_int8(fp32, int8, validation), "int8_ops": "all",
                "int8_layout": graph_layout(int8)}
    except ExportError as first:
        quantize_int8(fp32, int8, EMBEDDING_INT8)
        try:
            agree = validate_int8(fp32, int8, validation)
        except ExportError:
            raise first from None
        return {"int8_agreement": agree, "int8_ops": list(EMBEDDING_INT8), "int8_layout": graph_layout(int8),
                "int8_note": f"full quantization rejected: {first}"}


def _small(enc: Encoded) -> Encoded:
    """A two-question slice to trace the graph with (the axes are dynamic anyway)."""
    return Encoded(*(a[:2] for a in (enc.input_ids, enc.attention_mask, enc.token_type_ids,
                                      enc.option_mask, enc.lengths)))
