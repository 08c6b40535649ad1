"""The shipped storage of a reader's weights: int8 per output channel, outlier rows in float16.

The MPNet family's LayerNorm and GELU outputs carry a few input channels 20-100 times larger
than the median channel (the MPNet reader's card, 'lesson').  A weight row that multiplies
such a channel has its rounding error multiplied with it: plain per-channel int8 weights moved
1.7% of the MPNet reader's RACE dev answers.  Here each MatMul's weight W [K, N] is stored as

    int8 W' (per output column, scale = max|W'[:, n]| / 127) with the outlier rows zeroed
    + the outlier rows W[idx, :] in float16,

and the graph computes x·W = x·dq(W') + x[:, idx]·W[idx, :] (DequantizeLinear, MatMul; Gather,
Cast, MatMul, Add).  Outlier channels are chosen from calibration (largest |x_j| per input
channel over real questions, `models.export.mpnet_int8.activation_absmax`): those above `ratio` times
the median channel, at most `most` per tensor.  The word embeddings are int8 per row.  About a
quarter of the float32 bytes.

`inference.int8_weights` reads it back: the dense float graph (`dense`, what the card calls the
float model of the files) and the runtime's int8 recipes.
"""
from __future__ import annotations

import json

import numpy as np

from inference.cpu_graph import set_meta
from inference.int8_weights import ROWS_META
from inference.one_sequence import FORMATS, encode

RECIPE = "int8-rows"
RATIO = 6.0
MOST = 8


def outlier_channels(absmax: dict[str, np.ndarray], ratio: float = RATIO, most: int = MOST) -> dict[str, np.ndarray]:
    out = {}
    for name, m in absmax.items():
        idx = np.nonzero(m > ratio * np.median(m))[0]
        if len(idx):
            out[name] = np.sort(idx[np.argsort(-m[idx])][:most]).astype(np.int64)
    return out


def store(fp32_model, channels: dict[str, np.ndarray], skip: tuple[str, ...] = ("scorer",)):
    """The stored graph (ModelProto) of an fp32 graph built by `models.export.mpnet_onnx.build`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.ModelProto.FromString(fp32_model.SerializeToString())
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    consumers: dict[str, int] = {}
    for n in g.node:
        for i in n.input:
            consumers[i] = consumers.get(i, 0) + 1
    new_inits, pre, nodes, drop, rows_meta = [], [], [], set(), {}

    def per_column(w: np.ndarray, name: str, axis: int) -> None:
        red = 0 if axis == 1 else 1
        scale = (np.abs(w).max(red) / 127.0).astype(np.float32)
        scale[scale == 0] = 1.0
        q = np.clip(np.round(w / (scale[None, :] if axis == 1 else scale[:, None])), -127, 127).astype(np.int8)
        new_inits.extend([numpy_helper.from_array(q, name + "_q"), numpy_helper.from_array(scale, name + "_scale"),
                          numpy_helper.from_array(np.zeros_like(scale, dtype=np.int8), name + "_zp")])
        pre.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zp"], [name],
                                    name=name + "_dequantize", axis=axis))
        drop.add(name)

    for t in ("word_embeddings_0", "word_embeddings_1"):
        if t in inits:
            per_column(numpy_helper.to_array(inits[t]).astype(np.float32), t, axis=0)
    for n in g.node:
        w_name = n.input[1] if n.op_type == "MatMul" and len(n.input) > 1 else None
        if w_name is None or w_name not in inits or any(k in n.name for k in skip) or w_name in drop:
            nodes.append(n)
            continue
        if consumers.get(w_name, 0) != 1:
            raise ValueError(f"{w_name}: a weight read by several nodes")
        w = numpy_helper.to_array(inits[w_name]).astype(np.float32)
        idx = channels.get(n.input[0])
        if idx is None or not len(idx):
            per_column(w, w_name, axis=1)
            nodes.append(n)
            continue
        rest = w.copy()
        rest[idx, :] = 0.0
        per_column(rest, w_name, axis=1)
        out = n.output[0]
        main = helper.make_node("MatMul", [n.input[0], w_name], [out + "_main"], name=n.name)
        new_inits += [numpy_helper.from_array(idx.astype(np.int64), w_name + "_rows_idx"),
                      numpy_helper.from_array(w[idx, :].astype(np.float16), w_name + "_rows")]
        nodes += [main,
                  helper.make_node("Gather", [n.input[0], w_name + "_rows_idx"], [out + "_rows_x"],
                                   name=n.name + "_rows_gather", axis=-1),
                  helper.make_node("Cast", [w_name + "_rows"], [w_name + "_rows_f"], name=n.name + "_rows_cast",
                                   to=TensorProto.FLOAT),
                  helper.make_node("MatMul", [out + "_rows_x", w_name + "_rows_f"], [out + "_rows_y"],
                                   name=n.name + "_rows_matmul"),
                  helper.make_node("Add", [out + "_main", out + "_rows_y"], [out], name=n.name + "_rows_add")]
        rows_meta[w_name] = [int(i) for i in idx]
    keep = [t for t in g.initializer if t.name not in drop]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    del g.node[:]
    g.node.extend(pre + nodes)
    set_meta(model, "mcqlens.int8_recipe", RECIPE)
    set_meta(model, ROWS_META, json.dumps(rows_meta))
    onnx.checker.check_model(model)
    return model


def calibration_feeds(tokenizer, records: list[dict], max_length: int = 512) -> list[dict]:
    """One feeds dict per question and format (unpadded, as the CPU runtime feeds them)."""
    feeds = []
    for fmt in FORMATS:
        for r in records:
            b = encode(tokenizer, [(r["passage"], r["stem"], r["alternatives"])], fmt, max_length)
            feeds.append({"input_ids": b.input_ids, "attention_mask": b.attention_mask, "option_ids": b.option_ids})
    return feeds
