"""The int8 forms of the MPNet reader's graph (`models.export.mpnet_onnx.build`).

int8 recipes (`RECIPES`): ONNX Runtime's dynamic quantization (int8 weights per output
channel, activations quantized per tensor at run time) of
* ``full``: every MatMul and the embedding tables;
* ``smooth``: the same after SmoothQuant on the FFN down-projections, whose inputs (GELU
  outputs, 3,072 wide) carry the outliers that a per-tensor activation scale loses: their
  channels are divided by s_j = max|x_j|^α / max|w_j|^(1−α) and the weight rows multiplied by
  it (`smooth_factors` from calibration statistics);
* ``keep-ffn-out``: every MatMul but those 12 down-projections, which stay in float;
* ``weights``: weight-only int8 (DequantizeLinear on constant weights; float arithmetic).
`models.shipping.gpu_ship` chooses the fastest recipe whose argmax agrees with float32 on RACE dev.

Also here, tried and not shipped: int8 with activations quantized per row (`rowwise`) and an
LLM.int8()-style split of the outlier channels (`split_outliers`, `quantize_split`), with the
calibration statistics they need (`activation_absmax`, `outlier_channels`).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from inference.cpu_graph import set_meta

RECIPES = ("full", "smooth", "keep-ffn-out", "weights")


def ffn_out_nodes(model) -> list[str]:
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.name.endswith("_ffn_out_matmul")]


def smooth_factors(act_absmax: dict[int, np.ndarray], state: dict[str, np.ndarray], alpha: float = 0.5) -> dict:
    """SmoothQuant factors s_j = max|x_j|^α / max|w_j|^(1−α) of each layer's down-projection input."""
    out = {}
    for layer, a in act_absmax.items():
        w = np.abs(state[f"encoder.encoder.layer.{layer}.output.dense.weight"]).max(0)  # per input channel
        f = np.power(np.maximum(a, 1e-5), alpha) / np.power(np.maximum(w, 1e-5), 1 - alpha)
        out[layer] = np.clip(f, 1e-2, 1e3).astype(np.float32)
    return out


def quantize(fp32_model, recipe: str):
    """The int8 graph of `recipe` (ModelProto) from an fp32 ModelProto built by `build`."""
    import onnx

    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose from {', '.join(RECIPES)}")
    if recipe == "weights":
        return weight_only(fp32_model)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    exclude = ffn_out_nodes(fp32_model) if recipe == "keep-ffn-out" else []
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        onnx.save(fp32_model, str(src))
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Gather"], nodes_to_exclude=exclude,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        q = onnx.load(str(dst))
    _keep_float_small_gathers(q)
    for p in fp32_model.metadata_props:
        _meta(q, p.key, p.value)
    _meta(q, "mcqlens.int8_recipe", recipe)
    return q


def _keep_float_small_gathers(model) -> None:
    """Nothing to undo: only the two embedding tables are large enough to be quantized."""


def weight_only(fp32_model):
    """int8 weights (per output channel) rebuilt by DequantizeLinear, float arithmetic."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.ModelProto.FromString(fp32_model.SerializeToString())
    g = model.graph
    targets = {n.input[1] for n in g.node if n.op_type == "MatMul"}
    targets |= {"word_embeddings_0", "word_embeddings_1"}
    new_inits, nodes = [], []
    for t in g.initializer:
        if t.name not in targets:
            new_inits.append(t)
            continue
        w = numpy_helper.to_array(t)
        axis = 0 if t.name.startswith("word_embeddings") else 1  # per embedding row / per output column
        red = 0 if axis == 1 else 1
        scale = (np.abs(w).max(red) / 127.0).astype(np.float32)
        scale[scale == 0] = 1.0
        q = np.clip(np.round(w / (scale[None, :] if axis == 1 else scale[:, None])), -127, 127).astype(np.int8)
        new_inits += [numpy_helper.from_array(q, t.name + "_q"), numpy_helper.from_array(scale, t.name + "_scale"),
                      numpy_helper.from_array(np.zeros_like(scale, dtype=np.int8), t.name + "_zp")]
        nodes.append(helper.make_node("DequantizeLinear", [t.name + "_q", t.name + "_scale", t.name + "_zp"],
                                      [t.name], name=t.name + "_dequantize", axis=axis))
    del g.initializer[:]
    g.initializer.extend(new_inits)
    rest = list(g.node)
    del g.node[:]
    g.node.extend(nodes + rest)
    _meta(model, "mcqlens.int8_recipe", "weights")
    return model


def _meta(model, key, value):
    set_meta(model, key, value)


def rowwise(fp32_model, skip: tuple[str, ...] = ("scorer",)):
    """int8 MatMuls whose activations are quantized per token (per row, at run time) and whose
    weights per output channel: an outlier token no longer coarsens every other token's scale,
    which is what per-tensor dynamic quantization loses on the GELU outputs."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.ModelProto.FromString(fp32_model.SerializeToString())
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes, new_inits, drop = [], [], set()
    zero8 = "rowwise_zero_int8"
    new_inits += [numpy_helper.from_array(np.array(0, dtype=np.int8), zero8),
                  numpy_helper.from_array(np.array(1e-8, dtype=np.float32), "rowwise_eps"),
                  numpy_helper.from_array(np.array(127.0, dtype=np.float32), "rowwise_127"),
                  numpy_helper.from_array(np.array([-1], dtype=np.int64), "rowwise_last_axis")]
    for n in g.node:
        w = n.input[1] if n.op_type == "MatMul" and len(n.input) > 1 else None
        if w is None or w not in inits or any(k in n.name for k in skip):
            nodes.append(n)
            continue
        arr = numpy_helper.to_array(inits[w]).astype(np.float32)
        scale = np.abs(arr).max(0) / 127.0
        scale[scale == 0] = 1.0
        q = np.clip(np.round(arr / scale[None, :]), -127, 127).astype(np.int8)
        new_inits += [numpy_helper.from_array(q, w + "_rq"), numpy_helper.from_array(scale.astype(np.float32), w + "_rs")]
        drop.add(w)
        x, p = n.input[0], n.name
        nodes += [
            helper.make_node("Abs", [x], [p + "_abs"], name=p + "_abs"),
            helper.make_node("ReduceMax", [p + "_abs", "rowwise_last_axis"], [p + "_amax"], name=p + "_amax", keepdims=1)
            if _opset18(model) else
            helper.make_node("ReduceMax", [p + "_abs"], [p + "_amax"], name=p + "_amax", axes=[-1], keepdims=1),
            helper.make_node("Max", [p + "_amax", "rowwise_eps"], [p + "_amax1"], name=p + "_amax1"),
            helper.make_node("Div", [p + "_amax1", "rowwise_127"], [p + "_xs"], name=p + "_xs"),
            helper.make_node("Div", [x, p + "_xs"], [p + "_xn"], name=p + "_xn"),
            helper.make_node("Round", [p + "_xn"], [p + "_xr"], name=p + "_xr"),
            helper.make_node("Cast", [p + "_xr"], [p + "_xq"], name=p + "_xq", to=TensorProto.INT8),
            helper.make_node("MatMulInteger", [p + "_xq", w + "_rq", zero8, zero8], [p + "_y32"], name=p + "_mmi"),
            helper.make_node("Cast", [p + "_y32"], [p + "_yf"], name=p + "_yf", to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_xs", w + "_rs"], [p + "_ys"], name=p + "_ys"),
            helper.make_node("Mul", [p + "_yf", p + "_ys"], list(n.output), name=p + "_y"),
        ]
    keep = [t for t in g.initializer if t.name not in drop]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    del g.node[:]
    g.node.extend(nodes)
    _meta(model, "mcqlens.int8_recipe", "rowwise")
    return model


def _opset18(model) -> bool:
    return any(o.domain in ("", "ai.onnx") and o.version >= 18 for o in model.opset_import)


def matmul_inputs(model) -> dict[str, list]:
    """Activation tensor → the MatMul nodes with a constant weight that read it."""
    inits = {t.name for t in model.graph.initializer}
    out: dict[str, list] = {}
    for n in model.graph.node:
        if n.op_type == "MatMul" and n.input[1] in inits and not n.name.startswith("scorer"):
            out.setdefault(n.input[0], []).append(n)
    return out


def activation_absmax(fp32_model, feeds_list) -> dict[str, np.ndarray]:
    """Per input channel, the largest |value| of every MatMul's activation over calibration
    runs (each feeds dict one unpadded sequence group, as the CPU runtime feeds them)."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    model = onnx.ModelProto.FromString(fp32_model.SerializeToString())
    names = sorted(matmul_inputs(model))
    for name in names:
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got: dict[str, np.ndarray] = {}
    for feeds in feeds_list:
        for name, a in zip(names, sess.run(names, feeds)):
            m = np.abs(a.reshape(-1, a.shape[-1])).max(0)
            got[name] = m if name not in got else np.maximum(got[name], m)
    return got


def outlier_channels(absmax: dict[str, np.ndarray], ratio: float = 6.0, most: int = 16) -> dict[str, np.ndarray]:
    """The input channels far above the rest (> `ratio` × the median channel), at most `most`."""
    out = {}
    for name, m in absmax.items():
        idx = np.nonzero(m > ratio * np.median(m))[0]
        if len(idx):
            out[name] = np.sort(idx[np.argsort(-m[idx])][:most]).astype(np.int64)
    return out


def split_outliers(fp32_model, channels: dict[str, np.ndarray]):
    """LLM.int8()-style decomposition, exact in float: a MatMul x·W whose input has outlier
    channels O becomes (x with O zeroed)·W + x[:, O]·W[O, :].  The first product is then
    quantized with a per-tensor scale that the outliers no longer set; the second, k × N, stays
    in float (k ≤ 16 of 768 or 3,072 channels)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.ModelProto.FromString(fp32_model.SerializeToString())
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    readers = matmul_inputs(model)
    prefix, nodes, new_inits = {}, [], []
    for t, idx in channels.items():
        if t not in readers:
            continue
        width = numpy_helper.to_array(inits[readers[t][0].input[1]]).shape[0]
        mask = np.ones(width, dtype=np.float32)
        mask[idx] = 0.0
        base = t.replace("/", "_")
        new_inits += [numpy_helper.from_array(mask, base + "_inlier_mask"),
                      numpy_helper.from_array(idx, base + "_outlier_idx")]
        prefix[t] = base
    for n in g.node:
        t = n.input[0] if n.op_type == "MatMul" else None
        if t in prefix and any(n is r for r in readers.get(t, [])):
            base = prefix[t]
            w = numpy_helper.to_array(inits[n.input[1]])
            new_inits.append(numpy_helper.from_array(np.ascontiguousarray(w[channels[t], :]), n.name + "_outlier_w"))
            n_int = helper.make_node("MatMul", [base + "_inliers", n.input[1]], [n.name + "_int_out"], name=n.name)
            n_flt = helper.make_node("MatMul", [base + "_outliers", n.name + "_outlier_w"], [n.name + "_flt_out"],
                                     name=n.name + "_outlier_mm")
            n_add = helper.make_node("Add", [n.name + "_int_out", n.name + "_flt_out"], list(n.output),
                                     name=n.name + "_outlier_add")
            nodes += [n_int, n_flt, n_add]
            continue
        nodes.append(n)
        for o in n.output:
            if o in prefix:
                base = prefix[o]
                nodes += [helper.make_node("Mul", [o, base + "_inlier_mask"], [base + "_inliers"], name=base + "_inliers"),
                          helper.make_node("Gather", [o, base + "_outlier_idx"], [base + "_outliers"],
                                           name=base + "_outliers", axis=-1)]
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(new_inits)
    onnx.checker.check_model(model)
    return model


def quantize_split(split_model, recipe_name: str = "outliers"):
    """Dynamic int8 of a `split_outliers` graph: every MatMul but the small float ones."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    exclude = [n.name for n in split_model.graph.node if n.name.endswith("_outlier_mm") or n.name.startswith("scorer")]
    exclude += [n.name for n in split_model.graph.node if n.op_type == "Gather" and n.name.endswith("_outliers")]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        onnx.save(split_model, str(src))
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Gather"], nodes_to_exclude=exclude,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        q = onnx.load(str(dst))
    for p in split_model.metadata_props:
        _meta(q, p.key, p.value)
    _meta(q, "mcqlens.int8_recipe", recipe_name)
    return q
