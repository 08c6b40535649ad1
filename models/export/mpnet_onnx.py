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

Its int8 forms are `models.export.mpnet_int8`; `models.export.external_data` writes a graph with its weights
in files below 16 MiB.
"""
from __future__ import annotations

import json
import math

import numpy as np

from inference.cpu_graph import LAYOUT, UNPADDED, VERSION, set_meta
from inference.dequantize import dequantize_model
from models.export import vocab_gap

OPSET = 17
MS = "com.microsoft"
MAX_LEN = 512
VOCAB_CUT = 16384  # the word embedding table is split here (see `build`)


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
          smooth: dict[int, np.ndarray] | None = None, layout: str = "per-alternative"):
    """The fp32 ONNX graph of the reader (ModelProto).  `smooth[l]` divides layer l's
    down-projection input channels by those factors (weights multiplied to match).

    `layout` "per-alternative": inputs [B, O, T], one sequence per alternative, `pooling` over
    its tokens; "one-sequence" (`inference.one_sequence`): inputs input_ids, attention_mask and
    option_ids [B, T], each alternative's score pooled (mean) from the tokens numbered k + 1."""
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

    one_seq = layout == "one-sequence"
    i64("zero", 0)
    i64("ax0_sq", [0])
    in_shape = node("Shape", ["input_ids"], name="input_shape")
    if one_seq:  # [B, T] already
        t_1d = node("Slice", [in_shape, i64("t_at", [1]), i64("t_end", [2])], name="t_1d")
        ids2, mask2 = "input_ids", "attention_mask"
    else:  # [B, O, T] → [N, T]
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
    if one_seq:
        k = node("ReduceMax", ["option_ids"], name="k_max", keepdims=0)  # alternatives in the batch (a scalar)
        which = node("Range", [i64("one_i", 1), node("Add", [k, "one_i"], name="k_end"), "step"], name="which")
        which3 = node("Unsqueeze", [which, i64("ax02", [0, 2])], name="which_3d")  # [1, K, 1]
        onehot = node("Cast", [node("Equal", [node("Unsqueeze", ["option_ids", "ax1"], name="opt_3d"), which3],
                                    name="opt_eq")], name="opt_onehot", to=TensorProto.FLOAT)  # [B, K, T]
        count = node("Max", [node("ReduceSum", [onehot, i64("ax_m1", [-1])], name="opt_count", keepdims=1),
                             init("one_f", np.array(1.0, np.float32))], name="opt_count_min1")
        pooled = node("Div", [node("MatMul", [onehot, x], name="opt_sum"), count], name="pooled")  # [B, K, H]
        score = node("Add", [node("MatMul", [pooled, init("scorer_weight", state["scorer.weight"].T)], name="scorer"),
                             init("scorer_bias", state["scorer.bias"])], name="score")
        node("Squeeze", [score, i64("ax_last_sq", [-1])], ["logits"], name="logits_shape")
    elif pooling == "mean":
        m = node("Unsqueeze", [node("Cast", [mask2], name="mask_float", to=TensorProto.FLOAT), i64("ax2", [2])],
                 name="mask_3d")
        total = node("ReduceSum", [node("Mul", [x, m], name="masked"), "ax1"], name="pool_sum", keepdims=0)
        count = node("Max", [node("ReduceSum", [m, "ax1"], name="pool_count", keepdims=0),
                             init("one_f", np.array(1.0, np.float32))], name="pool_count_min1")
        pooled = node("Div", [total, count], name="pooled")
    else:
        pooled = node("Gather", [x, i64("first", 0)], name="pooled", axis=1)
    if not one_seq:
        score = node("Add", [node("MatMul", [pooled, init("scorer_weight", state["scorer.weight"].T)],
                                  name="scorer"), init("scorer_bias", state["scorer.bias"])], name="score")
        bo = node("Slice", [in_shape, i64("s0", [0]), i64("s2", [2])], name="batch_options")
        node("Reshape", [score, bo], ["logits"], name="logits_shape")
    names = ("input_ids", "attention_mask", "option_ids") if one_seq else ("input_ids", "attention_mask")
    dims = ["batch", "tokens"] if one_seq else ["batch", "options", "tokens"]
    graph = helper.make_graph(
        nodes, "mcqlens_mpnet_reader",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in names],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "options"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)],
                              producer_name="mcqlens.models.mpnet_onnx")
    model.ir_version = 8
    set_meta(model, UNPADDED, "1")
    set_meta(model, "mcqlens.layout", layout)
    set_meta(model, LAYOUT, json.dumps({"version": VERSION, "attention": layers, "skip_layernorm": 0, "kept": [],
                                         "built": "models.mpnet_onnx"}))
    onnx.checker.check_model(model)
    return model


def state_from_graph(model) -> tuple[dict[str, np.ndarray], dict]:
    """The float weights of a graph written by `build` (int8 weights dequantized), by the
    names of `MultipleChoiceModel` with an MPNet encoder, and the encoder's config: the
    inverse of `build`, so PyTorch can run the very weights a shipped graph holds."""
    from onnx import numpy_helper

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
    low = vocab_gap.restore(w["word_embeddings_0"], model)  # rows no text reaches may be left out
    state = {e + "embeddings.word_embeddings.weight": np.concatenate([low, w["word_embeddings_1"]]),
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
