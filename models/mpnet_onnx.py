"""The MPNet reader as an ONNX graph, built node by node from its weights, and its int8 forms.

Why not torch.onnx: MPNet's attention adds a relative position bias, a pattern ONNX
Runtime's fusions do not recognise, so an exported graph runs attention as plain MatMul +
Softmax on padded batches (2.7 s for one question on 2 cores).  Written here directly, each
layer's attention is ONNX Runtime's `MultiHeadAttention` with the bias as its
`attention_bias` input and no padding mask: the CPU layout of `inference.cpu_graph`
(flash attention on each unpadded sequence, LayerNormalization instead of
SkipLayerNormalization).  MPNet's bias depends on the sequence length only, so it is computed
once per run from a [2·512+1, heads] table indexed by key − query.  The graph also declares no
`token_type_ids` (MPNet has none).  It is exact for unpadded sequences (metadata
`mcqlens.unpadded` = 1); `inference.cpu_graph.padded` gives it a key padding mask for the GPU.

int8 recipes (`RECIPES`): ONNX Runtime's dynamic quantization (int8 weights per output
channel, activations quantized per tensor at run time) of
* ``full``: every MatMul and the embedding tables;
* ``smooth``: the same after SmoothQuant on the FFN down-projections, whose inputs (GELU
  outputs, 3,072 wide) carry the outliers that a per-tensor activation scale loses: their
  channels are divided by s_j = max|x_j|^α / max|w_j|^(1−α) and the weight rows multiplied by
  it (`smooth_factors` from calibration statistics);
* ``keep-ffn-out``: every MatMul but those 12 down-projections, which stay in float;
* ``weights``: weight-only int8 (DequantizeLinear on constant weights; float arithmetic).
`models.gpu_ship` chooses the fastest recipe whose argmax agrees with float32 on RACE dev.

Weights are saved as ONNX external data in files below 16 MiB (`save_split`): every file
stays far under the 95 MB a git host takes, and each can come back from a GPU machine.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

OPSET = 17
MS = "com.microsoft"
MAX_LEN = 512
VOCAB_CUT = 16384  # the word embedding table is split here (see `build`)
RECIPES = ("full", "smooth", "keep-ffn-out", "weights")
PART_BYTES = 15 * 1024 * 1024  # external data files: each under the 16 MiB a device call brings back


def _bucket(rel: np.ndarray, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """transformers' MPNet relative_position_bucket, in numpy (rel = key − query)."""
    n = -rel
    half = num_buckets // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    max_exact = half // 2
    with np.errstate(divide="ignore"):
        large = max_exact + (np.log(np.maximum(n, 1).astype(np.float32) / max_exact)
                             / math.log(max_distance / max_exact) * (half - max_exact)).astype(np.int64)
    large = np.minimum(large, half - 1)
    return ret + np.where(n < max_exact, n, large)


def bias_table(rel_weight: np.ndarray) -> np.ndarray:
    """[2·MAX_LEN+1, heads]: the position bias of every offset key − query in −512..512."""
    offsets = np.arange(-MAX_LEN, MAX_LEN + 1)
    return rel_weight[_bucket(offsets)].astype(np.float32)


def state_arrays(model) -> dict[str, np.ndarray]:
    """A `MultipleChoiceModel` with an MPNet encoder → float32 numpy weights by name."""
    return {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}


def build(state: dict[str, np.ndarray], config: dict, pooling: str = "mean",
          smooth: dict[int, np.ndarray] | None = None):
    """The fp32 ONNX graph of the reader (ModelProto).  `smooth[l]` divides layer l's
    down-projection input channels by those factors (weights multiplied to match)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    heads = int(config["num_attention_heads"])
    layers = int(config["num_hidden_layers"])
    eps = float(config.get("layer_norm_eps", 1e-5))
    pad_idx = int(config.get("pad_token_id", 1))
    nodes, inits = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op, ins, outs=None, name=None, domain="", **attrs):
        name = name or f"{op}_{len(nodes)}"
        outs = outs or [name + "_out"]
        nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def s(key):
        return state[f"encoder.{key}"]

    def i64(name, values):
        return init(name, np.array(values, dtype=np.int64))

    # [B, O, T] → [N, T]
    i64("zero", 0)
    i64("ax0_sq", [0])
    in_shape = node("Shape", ["input_ids"], name="input_shape")
    t_1d = node("Slice", [in_shape, i64("t_at", [2]), i64("t_end", [3])], name="t_1d")
    flat = node("Concat", [i64("minus_one", [-1]), t_1d], name="shape_n_t", axis=0)
    ids2 = node("Reshape", ["input_ids", flat], name="ids_flat")
    mask2 = node("Reshape", ["attention_mask", flat], name="mask_flat")
    t_vec = node("Squeeze", [t_1d, "ax0_sq"], name="t_scalar")  # the token count as a scalar, for Range
    # positions pad_idx+1 … pad_idx+T, as transformers numbers a right-padded sequence's tokens
    # (a Slice of the table: ONNX Runtime's own Gather-to-Slice rewrite of a Range lookup fails)
    pos_from = pad_idx + 1
    pos = node("Slice", [init("position_embeddings", s("embeddings.position_embeddings.weight")),
                         i64("pos_start", [pos_from]), node("Add", [t_1d, "pos_start"], name="pos_end"),
                         i64("axis0", [0])], name="position_lookup")
    # the word table in two halves: each (as int8) fits one external data file below 16 MiB
    table = s("embeddings.word_embeddings.weight")
    cut = VOCAB_CUT
    low = node("Gather", [init("word_embeddings_0", table[:cut]), node("Min", [ids2, i64("cut_last", cut - 1)],
                                                                       name="ids_low")], name="word_lookup_0")
    high = node("Gather", [init("word_embeddings_1", table[cut:]),
                           node("Max", [node("Sub", [ids2, i64("cut", cut)], name="ids_high_raw"), "zero"],
                                name="ids_high")], name="word_lookup_1")
    in_low = node("Unsqueeze", [node("Less", [ids2, "cut"], name="ids_in_low"), i64("ax_last", [-1])],
                  name="ids_in_low_3d")
    word = node("Where", [in_low, low, high], name="word_lookup")
    x = node("Add", [word, pos], name="embed_sum")
    x = node("LayerNormalization", [x, init("emb_ln_g", s("embeddings.LayerNorm.weight")),
                                    init("emb_ln_b", s("embeddings.LayerNorm.bias"))], name="emb_ln", axis=-1,
             epsilon=eps)
    # relative position bias [1, heads, T, T] from key − query offsets
    r = node("Range", ["zero", t_vec, i64("step", 1)], name="bias_range")
    rel = node("Sub", [node("Unsqueeze", [r, i64("ax0", [0])], name="bias_keys"),
                       node("Unsqueeze", [r, i64("ax1", [1])], name="bias_queries")], name="bias_rel")
    idx = node("Add", [rel, i64("bias_offset", MAX_LEN)], name="bias_index")
    bias = node("Gather", [init("position_bias_table", bias_table(s("encoder.relative_attention_bias.weight"))), idx],
                name="bias_lookup", axis=0)
    bias = node("Unsqueeze", [node("Transpose", [bias], name="bias_heads_first", perm=[2, 0, 1]), "ax0"],
                name="attention_bias")
    for layer in range(layers):
        p = f"encoder.layer.{layer}."
        qkv = [node("MatMul", [x, init(f"l{layer}_{w}_weight", s(p + f"attention.attn.{w}.weight").T)],
                    name=f"l{layer}_{w}_matmul") for w in "qkv"]
        qkv_bias = init(f"l{layer}_qkv_bias", np.concatenate([s(p + f"attention.attn.{w}.bias") for w in "qkv"]))
        ctx = node("MultiHeadAttention", [*qkv, qkv_bias, "", bias], name=f"l{layer}_mha", domain=MS, num_heads=heads)
        a = node("MatMul", [ctx, init(f"l{layer}_o_weight", s(p + "attention.attn.o.weight").T)],
                 name=f"l{layer}_o_matmul")
        a = node("Add", [node("Add", [a, init(f"l{layer}_o_bias", s(p + "attention.attn.o.bias"))],
                              name=f"l{layer}_o_add_bias"), x], name=f"l{layer}_attn_residual")
        x = node("LayerNormalization", [a, init(f"l{layer}_attn_ln_g", s(p + "attention.LayerNorm.weight")),
                                        init(f"l{layer}_attn_ln_b", s(p + "attention.LayerNorm.bias"))],
                 name=f"l{layer}_attn_ln", axis=-1, epsilon=eps)
        h = node("MatMul", [x, init(f"l{layer}_ffn_in_weight", s(p + "intermediate.dense.weight").T)],
                 name=f"l{layer}_ffn_in_matmul")
        h = node("BiasGelu", [h, init(f"l{layer}_ffn_in_bias", s(p + "intermediate.dense.bias"))],
                 name=f"l{layer}_gelu", domain=MS)
        w_out = s(p + "output.dense.weight").T  # [3072, 768]
        if smooth and layer in smooth:
            f = smooth[layer].astype(np.float32)
            h = node("Mul", [h, init(f"l{layer}_smooth_inv", (1.0 / f).astype(np.float32))], name=f"l{layer}_smooth")
            w_out = w_out * f[:, None]
        o = node("MatMul", [h, init(f"l{layer}_ffn_out_weight", w_out)], name=f"l{layer}_ffn_out_matmul")
        o = node("Add", [node("Add", [o, init(f"l{layer}_ffn_out_bias", s(p + "output.dense.bias"))],
                              name=f"l{layer}_ffn_out_add_bias"), x], name=f"l{layer}_ffn_residual")
        x = node("LayerNormalization", [o, init(f"l{layer}_ffn_ln_g", s(p + "output.LayerNorm.weight")),
                                        init(f"l{layer}_ffn_ln_b", s(p + "output.LayerNorm.bias"))],
                 name=f"l{layer}_ffn_ln", axis=-1, epsilon=eps)
    # pooling over the real tokens, then one score per sequence, folded back to [B, O]
    if pooling == "mean":
        m = node("Unsqueeze", [node("Cast", [mask2], name="mask_float", to=TensorProto.FLOAT), i64("ax2", [2])],
                 name="mask_3d")
        total = node("ReduceSum", [node("Mul", [x, m], name="masked"), "ax1"], name="pool_sum", keepdims=0)
        count = node("Max", [node("ReduceSum", [m, "ax1"], name="pool_count", keepdims=0),
                             init("one_f", np.array(1.0, np.float32))], name="pool_count_min1")
        pooled = node("Div", [total, count], name="pooled")
    else:
        pooled = node("Gather", [x, i64("first", 0)], name="pooled", axis=1)
    score = node("Add", [node("MatMul", [pooled, init("scorer_weight", state["scorer.weight"].T)], name="scorer"),
                         init("scorer_bias", state["scorer.bias"])], name="score")
    bo = node("Slice", [in_shape, i64("s0", [0]), i64("s2", [2])], name="batch_options")
    node("Reshape", [score, bo], ["logits"], name="logits_shape")
    graph = helper.make_graph(
        nodes, "mcqlens_mpnet_reader",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "options", "tokens"])
         for n in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "options"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)],
                              producer_name="mcqlens.models.mpnet_onnx")
    model.ir_version = 8
    from inference.cpu_graph import LAYOUT, UNPADDED, VERSION, _set_meta

    _set_meta(model, UNPADDED, "1")
    _set_meta(model, LAYOUT, json.dumps({"version": VERSION, "attention": layers, "skip_layernorm": 0, "kept": [],
                                         "built": "models.mpnet_onnx"}))
    onnx.checker.check_model(model)
    return model


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
    import tempfile

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
    from inference.cpu_graph import _set_meta

    _set_meta(model, key, value)


def save_split(model, directory: str | Path, name: str, part_bytes: int = PART_BYTES) -> list[str]:
    """Write `name` (the graph) and its weights as external data in `name`.dataN files of at
    most `part_bytes` each; returns the file names written."""
    from onnx import external_data_helper

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    import onnx

    model = onnx.ModelProto.FromString(model.SerializeToString())
    files, part, used, handle = [], -1, part_bytes, None
    try:
        for t in sorted(model.graph.initializer, key=lambda t: -len(t.raw_data or b"")):
            external_data_helper.convert_external_data_location = None
            if not t.HasField("raw_data"):
                from onnx import numpy_helper

                t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
            data = t.raw_data
            if len(data) < 4096:
                continue
            if len(data) > part_bytes:
                raise ValueError(f"tensor {t.name} ({len(data)} bytes) exceeds the part size")
            if used + len(data) > part_bytes:
                if handle:
                    handle.close()
                part += 1
                fname = f"{name}.data{part}"
                files.append(fname)
                handle = open(directory / fname, "wb")
                used = 0
            external_data_helper.set_external_data(t, location=files[-1], offset=used, length=len(data))
            handle.write(data)
            used += len(data)
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
    finally:
        if handle:
            handle.close()
    with open(directory / name, "wb") as f:
        f.write(model.SerializeToString())
    return [name, *files]


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
    import tempfile

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


def state_from_graph(model) -> tuple[dict[str, np.ndarray], dict]:
    """The float weights of a graph written by `build` (int8 weights dequantized), by the
    names of `MultipleChoiceModel` with an MPNet encoder, and the encoder's config: the
    inverse of `build`, so PyTorch can run the very weights a shipped graph holds."""
    from onnx import numpy_helper

    from inference.dequantize import dequantize_model

    g = dequantize_model(model).graph
    w = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    layers = sum(1 for n in g.node if n.op_type == "MultiHeadAttention")
    heads = next(a.i for n in g.node if n.op_type == "MultiHeadAttention" for a in n.attribute if a.name == "num_heads")
    eps = next(a.f for n in g.node if n.name == "emb_ln" for a in n.attribute if a.name == "epsilon")
    table = w["position_bias_table"]  # [2·MAX_LEN+1, heads] by offset → [buckets, heads]
    buckets = _bucket(np.arange(-MAX_LEN, MAX_LEN + 1))
    rel = np.zeros((int(buckets.max()) + 1, heads), dtype=np.float32)
    rel[buckets] = table
    e = "encoder."
    state = {e + "embeddings.word_embeddings.weight": np.concatenate([w["word_embeddings_0"], w["word_embeddings_1"]]),
             e + "embeddings.position_embeddings.weight": w["position_embeddings"],
             e + "embeddings.LayerNorm.weight": w["emb_ln_g"], e + "embeddings.LayerNorm.bias": w["emb_ln_b"],
             e + "encoder.relative_attention_bias.weight": rel,
             "scorer.weight": w["scorer_weight"].T, "scorer.bias": w["scorer_bias"]}
    hidden = w["emb_ln_g"].shape[0]
    for l in range(layers):
        p = f"{e}encoder.layer.{l}."
        qkv_b = w[f"l{l}_qkv_bias"]
        for i, k in enumerate("qkv"):
            state[p + f"attention.attn.{k}.weight"] = w[f"l{l}_{k}_weight"].T
            state[p + f"attention.attn.{k}.bias"] = qkv_b[i * hidden:(i + 1) * hidden]
        state[p + "attention.attn.o.weight"] = w[f"l{l}_o_weight"].T
        state[p + "attention.attn.o.bias"] = w[f"l{l}_o_bias"]
        state[p + "attention.LayerNorm.weight"], state[p + "attention.LayerNorm.bias"] = w[f"l{l}_attn_ln_g"], w[f"l{l}_attn_ln_b"]
        state[p + "intermediate.dense.weight"] = w[f"l{l}_ffn_in_weight"].T
        state[p + "intermediate.dense.bias"] = w[f"l{l}_ffn_in_bias"]
        state[p + "output.dense.weight"] = w[f"l{l}_ffn_out_weight"].T
        state[p + "output.dense.bias"] = w[f"l{l}_ffn_out_bias"]
        state[p + "output.LayerNorm.weight"], state[p + "output.LayerNorm.bias"] = w[f"l{l}_ffn_ln_g"], w[f"l{l}_ffn_ln_b"]
    vocab = state[e + "embeddings.word_embeddings.weight"].shape[0]
    config = {"vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
              "intermediate_size": w["l0_ffn_in_weight"].shape[1],
              "max_position_embeddings": w["position_embeddings"].shape[0],
              "relative_attention_num_buckets": rel.shape[0], "layer_norm_eps": float(eps)}
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in state.items()}, config
