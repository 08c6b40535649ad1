"""Reading the shipped int8 weights with float16 outlier rows (`models.export.int8_rows` writes them).

A stored MatMul computes x·dq(W') + x[:, idx]·R, with W' int8 (the outlier rows zeroed) and R
the float16 outlier rows.  `merge_rows` folds R back into the dense weight of a dequantized
graph (one MatMul again): the float model of the files, which the fp32 recipe runs, the GPU's
fp16 graph starts from, and the int8 recipes are checked against.
"""
from __future__ import annotations

import json

import numpy as np

ROWS_META = "mcqlens.int8_rows"  # metadata: {weight name: [outlier input channels]}


def rows_of(model) -> dict[str, list[int]]:
    meta = {p.key: p.value for p in model.metadata_props}
    return json.loads(meta.get(ROWS_META, "{}"))


def merge_rows(model):
    """A float graph (DequantizeLinear already folded) with every outlier-row pair merged into
    its MatMul's dense weight; a graph without rows comes back unchanged.  In place; returns it."""
    from onnx import numpy_helper

    rows = rows_of(model)
    if not rows:
        return model
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    by_name = {n.name: n for n in g.node}
    drop_nodes, replace = set(), {}
    for n in list(g.node):
        if not n.name.endswith("_rows_add"):
            continue
        base = n.name[: -len("_rows_add")]
        main = by_name[base]
        w_name = main.input[1]
        if w_name not in inits:
            raise ValueError(f"{w_name}: the stored weight is not a constant after dequantization")
        w = numpy_helper.to_array(inits[w_name]).astype(np.float32).copy()
        idx = numpy_helper.to_array(inits[w_name + "_rows_idx"]).astype(np.int64)
        w[idx, :] = numpy_helper.to_array(inits[w_name + "_rows"]).astype(np.float32)
        replace[w_name] = numpy_helper.from_array(w, w_name)
        main.output[0] = n.output[0]
        drop_nodes.update({n.name, base + "_rows_gather", base + "_rows_cast", base + "_rows_matmul"})
    keep = [n for n in g.node if n.name not in drop_nodes]
    del g.node[:]
    g.node.extend(keep)
    gone = {w + s for w in replace for s in ("_rows_idx", "_rows")}
    kept = [replace.get(t.name, t) for t in g.initializer if t.name not in gone]
    del g.initializer[:]
    g.initializer.extend(kept)
    from inference.cpu_graph import set_meta

    set_meta(model, ROWS_META, None)
    return model
