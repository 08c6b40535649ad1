"""The CPU layout of a model graph: what ONNX Runtime's CPU kernels run fastest.

Two rewrites of an exported (transformer-optimized) encoder, each exact:

* the fused float ``Attention`` (input, packed QKV weight [D, 3D], QKV bias, mask) becomes
  three MatMuls (the weight's Q, K and V columns) feeding ``MultiHeadAttention`` with the
  same bias and **no mask**.  Only without a mask (and without past state, in fp32) does
  ONNX Runtime's CPU kernel take its MLAS flash-attention path.  A graph without a mask
  is exact only for sequences without padding, so such a graph is marked
  (``mcqlens.unpadded`` = ``"1"`` in its metadata) and the runner feeds it each
  sequence trimmed to its own length (`inference.session`);
* ``SkipLayerNormalization(x, skip, gamma, beta, bias)`` becomes Add(x, bias) →
  Add(·, skip) → ``LayerNormalization``: ONNX Runtime's CPU SkipLayerNormalization kernel
  is slow (22 ms → 5 ms per standard question with MiniLM-L6 on 2 cores).  The session
  must then be created with ``disabled_optimizers=["SkipLayerNormFusion"]``, or ONNX
  Runtime fuses them back when it loads the graph.

Everything else is left as it is: weight-only int8 weight chains (a computed QKV weight
is cut by Slice nodes on constants, which ONNX Runtime folds at load), dynamically
quantized MatMuls, GELU, pooling.  An attention node it cannot rewrite (QAttention of an
older dynamic-int8 export, past state, a mask that does not come from the
``attention_mask`` input) keeps the graph padded: then no attention node is rewritten
and only the SkipLayerNormalization change is made.

`derive` caches the result in the user's cache folder; `padded` turns a CPU-layout graph
back into one that accepts padded batches (a mask for every MultiHeadAttention), for the
GPU.  Needs the `onnx` package.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

VERSION = 1  # bump when the rewrite changes: cached graphs of another version are rebuilt
UNPADDED = "mcqlens.unpadded"  # metadata key: "1" = feed unpadded single sequences only
LAYOUT = "mcqlens.cpu_layout"  # metadata key: what was rewritten (JSON)
MS = "com.microsoft"
NOTHING = "nothing to rewrite"
DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]  # session kwarg for a graph in CPU layout
_ATTENTION_ATTRS = {"num_heads", "scale", "mask_filter_value", "unidirectional"}


@dataclass
class Conversion:
    """The rewritten model and what was done to it."""

    model: object  # onnx.ModelProto
    attention: int = 0  # fused Attention nodes turned into MatMuls + MultiHeadAttention (no mask)
    skip_layernorm: int = 0  # SkipLayerNormalization nodes turned into Add, Add, LayerNormalization
    unpadded: bool = False  # the graph must be fed unpadded sequences
    kept: list[str] = field(default_factory=list)  # why attention stayed masked (one line per reason)

    @property
    def changed(self) -> bool:
        return bool(self.attention or self.skip_layernorm)

    def summary(self) -> str:
        parts = []
        if self.attention:
            parts.append(f"{self.attention} Attention -> MatMul + MultiHeadAttention without mask")
        if self.skip_layernorm:
            parts.append(f"{self.skip_layernorm} SkipLayerNormalization -> Add + LayerNormalization")
        if self.kept:
            parts.append("attention kept masked: " + "; ".join(sorted(set(self.kept))))
        return ", ".join(parts) or NOTHING


def is_unpadded(model) -> bool:
    """True when the graph computes right only for unpadded sequences."""
    meta = {p.key: p.value for p in model.metadata_props}
    if meta.get(UNPADDED) == "1":
        return True
    return any(n.op_type == "MultiHeadAttention" and n.domain == MS and _mha_has_no_mask(n) for n in model.graph.node)


def _mha_has_no_mask(node) -> bool:
    return not (len(node.input) > 4 and node.input[4])


def _attr(node, name, default=None):
    from onnx import helper

    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _opset(model, domain: str = "") -> int:
    for o in model.opset_import:
        if o.domain in ((domain,) if domain else ("", "ai.onnx")):
            return int(o.version)
    return 0


def set_meta(model, key: str, value: str | None) -> None:
    """Set (or, with None, remove) one metadata entry of an ONNX model."""
    keep = [p for p in model.metadata_props if p.key != key]
    del model.metadata_props[:]
    model.metadata_props.extend(keep)
    if value is not None:
        p = model.metadata_props.add()
        p.key, p.value = key, value


def _only_from(graph, name: str, allowed_inputs: set[str]) -> bool:
    """Whether tensor `name`'s values come from constants and the `allowed_inputs` graph
    inputs only (other tensors may contribute their shapes: Shape and Size are not followed)."""
    producer = {o: n for n in graph.node for o in n.output}
    graph_inputs = {i.name for i in graph.input}
    inits = {t.name for t in graph.initializer}
    seen, todo = set(), [name]
    while todo:
        t = todo.pop()
        if not t or t in seen:
            continue
        seen.add(t)
        if t in inits:
            continue
        if t in graph_inputs:
            if t not in allowed_inputs:
                return False
            continue
        node = producer.get(t)
        if node is None:
            return False
        if node.op_type not in ("Shape", "Size"):
            todo.extend(node.input)
    return True


def _attention_problem(node, graph, inits, used_outputs) -> str | None:
    """Why this Attention node cannot become an unmasked MultiHeadAttention (None: it can)."""
    if node.domain != MS:
        return f"{node.op_type} in domain {node.domain!r}"
    extra = sorted({a.name for a in node.attribute} - _ATTENTION_ATTRS)
    if extra:
        return f"Attention with {', '.join(extra)}"
    if _attr(node, "unidirectional", 0):
        return "unidirectional Attention"
    if any(i for i in node.input[4:]):
        return "Attention with past state or attention bias"
    if any(o in used_outputs for o in node.output[1:] if o):
        return "Attention whose present state is used"
    if len(node.input) < 3 or node.input[2] not in inits:
        return "Attention without a constant QKV bias"
    bias = inits[node.input[2]]
    if len(bias.dims) != 1 or bias.dims[0] % 3:
        return "Attention with an unusual QKV bias shape"
    if len(node.input) > 3 and node.input[3] and not _only_from(graph, node.input[3], {"attention_mask"}):
        return "Attention whose mask does not come from the attention_mask input alone"
    w = node.input[1]
    if w in inits and (len(inits[w].dims) != 2 or inits[w].dims[1] != bias.dims[0]):
        return "Attention with an unusual QKV weight shape"
    return None


def _convert_attention(model, conv: Conversion) -> None:
    import onnx
    from onnx import helper, numpy_helper

    g = model.graph
    inits = {t.name: t for t in g.initializer}
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    attention = [n for n in g.node if n.op_type in ("Attention", "QAttention")]
    problems = [(n, _attention_problem(n, g, inits, used) if n.op_type == "Attention" else
                 f"{n.op_type} (a dynamically quantized attention: its kernel needs the mask)") for n in attention]
    conv.kept = [p for _, p in problems if p]
    if not attention or conv.kept:
        return  # all or nothing: a graph is either fed padded batches or unpadded sequences
    out_nodes, new_inits, drop = [], [], set()
    for n in g.node:
        if n.op_type != "Attention":
            out_nodes.append(n)
            continue
        x, w, b = n.input[0], n.input[1], n.input[2]
        d = inits[b].dims[0] // 3
        qkv = []
        for j, part in enumerate("qkv"):
            wj = f"{n.name}_{part}_weight"
            if w in inits:  # slice the constant now
                arr = numpy_helper.to_array(inits[w])
                new_inits.append(numpy_helper.from_array(np.ascontiguousarray(arr[:, j * d:(j + 1) * d]), wj))
            else:  # a computed weight (e.g. rebuilt from int8): Slice on constants, folded at load
                names = [f"{wj}_{k}" for k in ("starts", "ends", "axes")]
                for name, v in zip(names, (j * d, (j + 1) * d, 1)):
                    new_inits.append(numpy_helper.from_array(np.array([v], dtype=np.int64), name))
                out_nodes.append(helper.make_node("Slice", [w, *names], [wj], name=f"{n.name}_{part}_slice"))
            out = f"{n.name}_{part}"
            out_nodes.append(helper.make_node("MatMul", [x, wj], [out], name=f"{n.name}_{part}_matmul"))
            qkv.append(out)
        attrs = {"num_heads": _attr(n, "num_heads")}
        for name in ("scale", "mask_filter_value"):
            if _attr(n, name) is not None:
                attrs[name] = _attr(n, name)
        out_nodes.append(helper.make_node("MultiHeadAttention", [*qkv, b], [n.output[0]], name=f"{n.name}_mha",
                                          domain=MS, **attrs))
        drop.add(w)
        conv.attention += 1
    still_used = {i for node in out_nodes for i in node.input}
    kept_inits = [t for t in g.initializer if t.name not in drop or t.name in still_used]
    del g.node[:]
    g.node.extend(out_nodes)
    del g.initializer[:]
    g.initializer.extend(kept_inits + new_inits)
    if not any(o.domain == MS for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(MS, 1))
    conv.unpadded = True


def _convert_skip_layernorm(model, conv: Conversion) -> None:
    from onnx import helper

    if _opset(model) < 17:  # LayerNormalization is an ONNX operator from opset 17
        return
    g = model.graph
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    out_nodes = []
    for n in g.node:
        if n.op_type != "SkipLayerNormalization" or n.domain != MS \
                or any(o in used for o in n.output[1:3] if o):  # mean / inverse std asked for
            out_nodes.append(n)
            continue
        x, skip, gamma = n.input[:3]
        beta = n.input[3] if len(n.input) > 3 else ""
        bias = n.input[4] if len(n.input) > 4 else ""
        cur = x
        if bias:
            out_nodes.append(helper.make_node("Add", [x, bias], [f"{n.name}_biased"], name=f"{n.name}_add_bias"))
            cur = f"{n.name}_biased"
        total = n.output[3] if len(n.output) > 3 and n.output[3] else f"{n.name}_sum"
        out_nodes.append(helper.make_node("Add", [cur, skip], [total], name=f"{n.name}_add_skip"))
        ln_inputs = [total, gamma] + ([beta] if beta else [])
        out_nodes.append(helper.make_node("LayerNormalization", ln_inputs, [n.output[0]], name=f"{n.name}_ln",
                                          axis=-1, epsilon=float(_attr(n, "epsilon", 1e-12))))
        conv.skip_layernorm += 1
    del g.node[:]
    g.node.extend(out_nodes)


def to_cpu_layout(model) -> Conversion:
    """The CPU layout of an ONNX model (a rewritten copy; the argument is not changed)."""
    import onnx

    model = onnx.ModelProto.FromString(model.SerializeToString())
    conv = Conversion(model)
    _convert_attention(model, conv)
    _convert_skip_layernorm(model, conv)
    conv.unpadded = conv.unpadded or is_unpadded(model)
    if conv.changed:
        set_meta(model, UNPADDED, "1" if conv.unpadded else None)
        set_meta(model, LAYOUT, json.dumps({"version": VERSION, "attention": conv.attention,
                                             "skip_layernorm": conv.skip_layernorm, "kept": sorted(set(conv.kept))}))
    return conv


def padded(model):
    """A graph that accepts padded batches: every unmasked MultiHeadAttention gets the
    attention_mask input ([B, O, T] → [B·O, T] int32 key padding mask).  For providers
    whose attention kernels are fast with a mask (CUDA).  The argument is not changed."""
    import onnx
    from onnx import helper

    model = onnx.ModelProto.FromString(model.SerializeToString())
    g = model.graph
    targets = [n for n in g.node if n.op_type == "MultiHeadAttention" and n.domain == MS and _mha_has_no_mask(n)]
    if not targets:
        set_meta(model, UNPADDED, None)
        return model
    if "attention_mask" not in {i.name for i in g.input}:
        raise ValueError("the graph has no attention_mask input to build a key padding mask from")
    flat, mask = "mcqlens_attention_mask_2d", "mcqlens_key_padding_mask"
    rank = next(len(i.type.tensor_type.shape.dim) for i in g.input if i.name == "attention_mask")
    # [B, O, T] (one sequence per alternative) → [B·O, T]; [B, T] (one sequence per question) stays
    new = [helper.make_node("Flatten", ["attention_mask"], [flat], name="mcqlens_mask_flatten", axis=max(1, rank - 1)),
           helper.make_node("Cast", [flat], [mask], name="mcqlens_mask_cast", to=onnx.TensorProto.INT32)]
    for n in targets:
        ins = list(n.input) + [""] * (4 - len(n.input))
        del n.input[:]
        n.input.extend(ins[:4] + [mask] + ins[5:])
    nodes = new + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    set_meta(model, UNPADDED, None)
    return model


def cache_folder(card) -> Path:
    """$XDG_CACHE_HOME/mcqlens/<model id>/ (graphs derived from a model directory)."""
    safe_id = "".join(c if c.isalnum() or c in "-_." else "_" for c in card.id) or "model"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcqlens" / safe_id


def _stamp(source: Path) -> dict:
    st = source.stat()
    return {"source": str(source.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "version": VERSION}


def derive(source: str | Path, card, rebuild: bool = False) -> tuple[Path, str, bool]:
    """(graph to load, what was rewritten, whether it takes unpadded sequences only) for the CPU.

    The CPU layout of `source` is written once to the cache folder (via a .partial file
    renamed into place, so a killed run never leaves half a graph) and reused while the
    source is unchanged (same path, size and modification time; a source newer than the
    cached graph is always rebuilt).  When nothing is to be rewritten, `source` itself is
    returned (that finding is cached too).  Exceptions (no onnx, an unreadable graph, a
    read-only cache) go to the caller, which falls back to the source graph.  `rebuild`
    ignores the cache: the caller found the cached graph damaged (ONNX Runtime could not
    load it), so it is derived again and replaced.
    """
    source = Path(source)
    folder = cache_folder(card)
    target = folder / f"{source.stem}.cpu-v{VERSION}.onnx"
    stamp_file = folder / f"{source.stem}.cpu-v{VERSION}.json"
    stamp = _stamp(source)
    try:
        old = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    if not rebuild and isinstance(old, dict) and {k: old.get(k) for k in stamp} == stamp:
        unpadded = bool(old.get("unpadded"))
        if old.get("graph") == "source":
            return source, old.get("summary", NOTHING), unpadded
        if target.is_file() and target.stat().st_mtime_ns >= stamp["mtime_ns"]:
            return target, old.get("summary", "CPU layout"), unpadded
    import onnx

    conv = to_cpu_layout(onnx.load(str(source)))
    folder.mkdir(parents=True, exist_ok=True)
    if conv.changed:
        _replace(target, lambda p: onnx.save(conv.model, str(p)))
    record = {**stamp, "graph": "derived" if conv.changed else "source", "summary": conv.summary(),
              "unpadded": conv.unpadded}
    _replace(stamp_file, lambda p: p.write_text(json.dumps(record), encoding="utf-8"))
    return (target if conv.changed else source), conv.summary(), conv.unpadded


def _replace(path: Path, write) -> None:
    """Write through `<path>.<pid>.partial`, then rename: never a half-written file at `path`."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        write(partial)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
