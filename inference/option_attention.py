"""Where each alternative looks in the passage: the reader's own attention, as a graph output.

For a one-sequence graph (`models.export.mpnet_onnx.build`, layout one-sequence) `add` appends an
output ``option_attention`` [B, K, T]: for the chosen layers, the attention probabilities of the
layer (softmax(QKᵀ/√d + MPNet's position bias), averaged over heads and layers), averaged over
the tokens of each alternative.  Row k says how much alternative k's tokens attend to each token
of the sequence — the passage's sentences that the reader consults for that alternative.  The
evidence (`inference.evidence_choice`) can weigh it in at no extra pass: it comes from the same
run as the probabilities, recomputing only QKᵀ for those layers (a few ms).

The graph is changed at load (`inference.session`), so the stored files need not carry it.
It is exact for unpadded sequences (the CPU layout); a padded batch would give padding keys
attention too.
"""
from __future__ import annotations

import numpy as np

OUTPUT = "option_attention"


def add(model, layers: list[int], output: str = OUTPUT):
    """`model` (ModelProto, one-sequence layout) with the `output` [B, K, T] of the mean attention of
    `layers`; in place (several calls with other names add several outputs: the study of
    `models.evaluation.evidence_cv` reads every layer's at once)."""
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    inits = {t.name: t for t in g.initializer}
    mha = {n.name: n for n in g.node if n.op_type == "MultiHeadAttention"}
    if not layers or "opt_onehot_out" not in {o for n in g.node for o in n.output}:
        raise ValueError("option attention needs a one-sequence graph and at least one layer")
    heads = next(a.i for a in mha[f"l{layers[0]}_mha"].attribute if a.name == "num_heads")
    hidden = numpy_helper.to_array(inits[f"l{layers[0]}_qkv_bias"]).shape[0] // 3
    d = hidden // heads
    nodes, new_inits = [], []

    def c(name, arr):
        new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    pre = f"{output}_"
    shape = c(pre + "heads_shape", np.array([0, 0, heads, d], dtype=np.int64))
    scale = c(pre + "scale", np.array(1.0 / np.sqrt(d), dtype=np.float32))
    axis1 = c(pre + "axis1", np.array([1], dtype=np.int64))
    probs = []
    for layer in layers:
        p = f"{pre}l{layer}"
        b = numpy_helper.to_array(inits[f"l{layer}_qkv_bias"]).astype(np.float32)
        q = f"l{layer}_q_matmul_out"
        k = f"l{layer}_k_matmul_out"
        nodes += [
            helper.make_node("Add", [q, c(p + "_bq", b[:hidden])], [p + "_q"], name=p + "_q"),
            helper.make_node("Add", [k, c(p + "_bk", b[hidden:2 * hidden])], [p + "_k"], name=p + "_k"),
            helper.make_node("Reshape", [p + "_q", shape], [p + "_q4"], name=p + "_q4"),
            helper.make_node("Reshape", [p + "_k", shape], [p + "_k4"], name=p + "_k4"),
            helper.make_node("Transpose", [p + "_q4"], [p + "_qh"], name=p + "_qh", perm=[0, 2, 1, 3]),
            helper.make_node("Transpose", [p + "_k4"], [p + "_kt"], name=p + "_kt", perm=[0, 2, 3, 1]),
            helper.make_node("MatMul", [p + "_qh", p + "_kt"], [p + "_s0"], name=p + "_s0"),
            helper.make_node("Mul", [p + "_s0", scale], [p + "_s1"], name=p + "_s1"),
            helper.make_node("Add", [p + "_s1", "attention_bias_out"], [p + "_s"], name=p + "_s"),
            helper.make_node("Softmax", [p + "_s"], [p + "_p"], name=p + "_p", axis=-1),
            helper.make_node("ReduceMean", [p + "_p", axis1], [p + "_m"], name=p + "_m", keepdims=0),
        ]
        probs.append(p + "_m")
    total = probs[0]
    for i, other in enumerate(probs[1:]):
        nodes.append(helper.make_node("Add", [total, other], [f"{pre}sum{i}"], name=f"{pre}sum{i}"))
        total = f"{pre}sum{i}"
    nodes += [
        helper.make_node("Div", ["opt_onehot_out", "opt_count_min1_out"], [pre + "pool"], name=pre + "pool"),
        helper.make_node("MatMul", [pre + "pool", total], [pre + "pooled"], name=pre + "pooled"),
        helper.make_node("Mul", [pre + "pooled", c(pre + "layers", np.array(1.0 / len(layers), dtype=np.float32))],
                         [output], name=output),
    ]
    g.node.extend(nodes)
    g.initializer.extend(new_inits)
    g.output.append(helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", "options", "tokens"]))
    _opset18_reduce_mean(model)
    return model


def _opset18_reduce_mean(model) -> None:
    """ReduceMean takes its axes as an input from opset 18; before it, as an attribute."""
    from onnx import helper

    version = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    if version >= 18:
        return
    for n in model.graph.node:
        if n.op_type == "ReduceMean" and n.name.endswith("_m") and len(n.input) == 2 and "_l" in n.name:
            del n.input[1]
            n.attribute.append(helper.make_attribute("axes", [1]))
