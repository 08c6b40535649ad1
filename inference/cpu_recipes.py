"""The CPU's arithmetic for a model stored as int8 weights with float16 outlier rows.

The shipped files (`models.export.int8_rows`) are storage; at load the runtime derives the graph it
runs, in memory, by the CPU's flags and the recipes the model's card allows:

* ``fp32``: every weight dequantized (`inference.int8_weights.merge_rows`): float arithmetic on
  the stored weights — the float model of the files;
* ``int8``: each stored MatMul as ONNX Runtime's dynamic int8 product (DynamicQuantizeLinear →
  MatMulInteger → scale: activations quantized per tensor at run time to u8, times the stored s8
  weights, VNNI/AMX kernels), the outlier channels (whose rows are stored apart in float) zeroed
  before the activation's scale is taken and multiplied in float;
* ``int8x2``: the same with a second int8 pass over what the first rounded away (its scale 1/254
  of the first's): the activation carries about 15 bits, the weights are the stored int8 ones
  exactly, so the product is the float model's to about 1e-3 of a logit, with int8 arithmetic;
* ``int8x2-first9``: the second pass in the first 9 of 12 layers only (`SECOND_PASS`): a quarter
  of the second pass's products saved, where its rounding moves the logits least;
  ``int8x2-first8`` and ``-first7`` the same in the first 8 or 7 (each layer less about 4% of a
  question's time on a VNNI CPU).

A card allows a recipe only where its argmax agrees with fp32 on ≥ 99.3% of RACE dev in each
format its graph reads (`card.quantization.runtime`): the default's 12 layers read the standard
format alone (its shortcut part reads the other), so first8 (99.55% there) is kept for it, and
first7 (99.07%) for none.  `choose` takes the fastest allowed where the CPU has
VNNI (AVX-512 VNNI, AVX-VNNI or AMX); without VNNI, fp32: ONNX Runtime's u8×s8 kernels then use
VPMADDUBSW, whose 16-bit sums saturate on the second pass's full-range values, and gain little.
MCQLENS_CPU_RECIPE forces one.
"""
from __future__ import annotations

import json
import os

import numpy as np

KINDS = ("qkv", "o", "ffn_in", "ffn_out")  # a layer's MatMuls (q, k and v merged: `merge_qkv`)


def _layers(first: int, last: int) -> tuple[str, ...]:
    return tuple(f"l{i}_{k}_matmul" for i in range(first, last + 1) for k in KINDS)


# recipe → the MatMuls (by name) given the second int8 pass; the others take one pass.  first7, first8
# and first10 were measured beside first9 (first8 failed the 99.3% rule in the shortcut format, which the
# default's 12 layers no longer read; first7 failed it in the standard); a card allows only what it kept
SECOND_PASS = {
    "int8": (),
    # the first 9 layers twice, the last 3 once: a single pass there moves the logits about 1/9 as
    # much as a single pass everywhere (screened on RACE dev, docs/model_runs/…/trials/late-single-pass)
    "int8x2-first7": _layers(0, 6),
    "int8x2-first8": _layers(0, 7),
    "int8x2-first9": _layers(0, 8),
    "int8x2-first10": _layers(0, 9),
    "int8x2": ("_matmul",),
}
RECIPES = ("fp32", "int8", "int8x2-first7", "int8x2-first8", "int8x2-first9", "int8x2-first10", "int8x2")
FASTEST_FIRST = ("int8", "int8x2-first7", "int8x2-first8", "int8x2-first9", "int8x2-first10", "int8x2", "fp32")
ENV = "MCQLENS_CPU_RECIPE"


def cpu_flags() -> set[str]:
    """The CPU's feature flags (Linux /proc/cpuinfo; an empty set elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def has_vnni(flags: set[str] | None = None) -> bool:
    flags = cpu_flags() if flags is None else flags
    return bool({"avx512_vnni", "avx_vnni", "amx_int8"} & flags)


def choose(allowed: list[str] | None = None, flags: set[str] | None = None) -> tuple[str, str]:
    """(recipe, why) for this CPU."""
    allowed = [r for r in (allowed or RECIPES) if r in RECIPES] or ["fp32"]
    forced = os.environ.get(ENV, "")
    if forced:  # a study of the recipes (models.evaluation.recipe_eval) may force one the card does not allow
        if forced not in RECIPES:
            return allowed[0], f"{ENV}={forced} is not a recipe ({', '.join(RECIPES)})"
        return forced, f"{ENV}={forced}" + ("" if forced in allowed else " (not one this model's card allows)")
    fast = [r for r in FASTEST_FIRST if r in allowed and r != "fp32"]
    if fast and has_vnni(flags):
        return fast[0], f"{fast[0]} arithmetic: this CPU has VNNI"
    if "fp32" in allowed:
        why = "this CPU has no VNNI (int8 would not be faster)" if fast else "the only recipe this model allows"
        return "fp32", f"fp32 arithmetic: {why}"
    return allowed[0], f"{allowed[0]} arithmetic (the only recipe this model allows)"


def is_stored(model) -> bool:
    meta = {p.key: p.value for p in model.metadata_props}
    return meta.get("mcqlens.int8_recipe") == "int8-rows"


def derive(stored, recipe: str, inplace: bool = False):
    """The graph (ModelProto) that `recipe` runs, from a stored graph (weights loaded)."""
    if recipe not in RECIPES:
        raise ValueError(f"unknown CPU recipe {recipe!r}; expected one of {', '.join(RECIPES)}")
    # one copy at most (a whole-graph copy is a serialisation of ~110 MB, about 0.3 s with Python's
    # lock held: the window's thread waits for it); `inplace` when the caller's graph is not used after
    stored = merge_qkv(stored, inplace=inplace)
    if recipe == "fp32":
        from inference.dequantize import dequantize_model

        return dequantize_model(stored)
    return dynamic_int8(stored, two_pass=SECOND_PASS[recipe], name=recipe, inplace=True)


def merge_qkv(stored, inplace: bool = False):
    """Each layer's query, key and value projections as one product (their int8 columns and float16
    rows side by side, each column keeping its scale: exact), split after: a third of the kernels and
    one wider GEMM.  The split's outputs keep the three products' names (the attention reads them)."""
    import onnx
    from onnx import helper, numpy_helper

    from inference.cpu_graph import set_meta
    from inference.int8_weights import ROWS_META, rows_of

    model = stored if inplace else onnx.ModelProto.FromString(stored.SerializeToString())
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    by_name = {n.name: n for n in g.node}
    rows = rows_of(model)
    arr = lambda name: numpy_helper.to_array(inits[name])  # noqa: E731
    drop_nodes, drop_inits, new_nodes, new_inits = set(), set(), [], []
    layer = 0
    while f"l{layer}_q_matmul" in by_name:
        names = [f"l{layer}_{w}_matmul" for w in "qkv"]
        mms = [by_name[n] for n in names]
        weights = [m.input[1] for m in mms]
        x = mms[0].input[0]
        if any(m.input[0] != x for m in mms) or any(w + "_q" not in inits for w in weights) or \
                len({tuple(rows.get(w, [])) for w in weights}) != 1:
            layer += 1
            continue
        outs = [f"l{layer}_{w}_matmul_out" for w in "qkv"]
        base = f"l{layer}_qkv_weight"
        new_inits += [numpy_helper.from_array(np.concatenate([arr(w + "_q") for w in weights], 1), base + "_q"),
                      numpy_helper.from_array(np.concatenate([arr(w + "_scale") for w in weights]), base + "_scale"),
                      numpy_helper.from_array(np.concatenate([arr(w + "_zp") for w in weights]), base + "_zp"),
                      numpy_helper.from_array(np.array([arr(w + "_scale").shape[0] for w in weights], np.int64),
                                              base + "_split")]
        new_nodes.append(helper.make_node("DequantizeLinear", [base + "_q", base + "_scale", base + "_zp"], [base],
                                          name=base + "_dequantize", axis=1))
        p = f"l{layer}_qkv_matmul"
        idx = rows.get(weights[0], [])
        if idx:
            new_inits += [numpy_helper.from_array(arr(weights[0] + "_rows_idx"), base + "_rows_idx"),
                          numpy_helper.from_array(np.concatenate([arr(w + "_rows") for w in weights], 1), base + "_rows")]
            new_nodes += [helper.make_node("MatMul", [x, base], [p + "_out_main"], name=p),
                          helper.make_node("Gather", [x, base + "_rows_idx"], [p + "_out_rows_x"], name=p + "_rows_gather",
                                           axis=-1),
                          helper.make_node("Cast", [base + "_rows"], [base + "_rows_f"], name=p + "_rows_cast",
                                           to=onnx.TensorProto.FLOAT),
                          helper.make_node("MatMul", [p + "_out_rows_x", base + "_rows_f"], [p + "_out_rows_y"],
                                           name=p + "_rows_matmul"),
                          helper.make_node("Add", [p + "_out_main", p + "_out_rows_y"], [p + "_out"],
                                           name=p + "_rows_add")]
            rows[base] = idx
        else:
            new_nodes.append(helper.make_node("MatMul", [x, base], [p + "_out"], name=p))
        new_nodes.append(helper.make_node("Split", [p + "_out", base + "_split"], outs, name=p + "_split", axis=-1))
        for w, n in zip(weights, names):
            drop_nodes.update({n, w + "_dequantize", n + "_rows_gather", n + "_rows_cast", n + "_rows_matmul",
                               n + "_rows_add"})
            drop_inits.update({w + s for s in ("_q", "_scale", "_zp", "_rows_idx", "_rows")})
            rows.pop(w, None)
        layer += 1
    if not new_nodes:
        return model
    kept = [n for n in g.node if n.name not in drop_nodes]
    first = next((i for i, n in enumerate(kept) if n.op_type != "DequantizeLinear"), 0)
    # the new weights' DequantizeLinear beside the others; the products where the attention needs them
    out_nodes = kept[:first] + [n for n in new_nodes if n.op_type == "DequantizeLinear"] + kept[first:]
    ordered = []
    pending = {n.output[0] for n in new_nodes if n.op_type != "DequantizeLinear"}
    for n in out_nodes:
        if n.op_type == "MultiHeadAttention":
            layer_nodes = [m for m in new_nodes if m.op_type != "DequantizeLinear" and m.name.startswith(n.name[:-3])]
            ordered += [m for m in layer_nodes if m.output[0] in pending]
            pending -= {m.output[0] for m in layer_nodes}
        ordered.append(n)
    del g.node[:]
    g.node.extend(ordered)
    kept_inits = [t for t in g.initializer if t.name not in drop_inits]
    del g.initializer[:]
    g.initializer.extend(kept_inits + new_inits)
    set_meta(model, ROWS_META, json.dumps(rows))
    return model


def dynamic_int8(stored, skip: tuple[str, ...] = (), extra: dict | None = None, two_pass: tuple[str, ...] = (),
                 name: str | None = None, inplace: bool = False):
    """The int8 graph; `skip`: MatMuls (by name) kept in float; `extra`: {activation: input channels}
    also multiplied in float beside the int8 product; `two_pass`: MatMuls (by name) given the second
    int8 pass (`SECOND_PASS`: ``("_matmul",)`` every one); `name`: the recipe the graph's metadata
    names; `inplace`: change `stored` itself instead of a copy."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from inference.cpu_graph import set_meta
    from inference.int8_weights import rows_of

    model = stored if inplace else onnx.ModelProto.FromString(stored.SerializeToString())
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    rows = rows_of(model)
    dq = {n.output[0]: n for n in g.node if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    nodes, new_inits, drop_inits = [], [], set()
    masks: dict[tuple, str] = {}
    quantized: dict[tuple, str] = {}
    for n in g.node:
        if n.op_type == "DequantizeLinear" and n.output[0] in dq:
            axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
            if axis == 0:  # the word embeddings: float at load
                q = numpy_helper.to_array(inits[n.input[0]]).astype(np.float32)
                s = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
                new_inits.append(numpy_helper.from_array(q * s[:, None], n.output[0]))
                drop_inits.update(n.input[:3])
            continue  # the MatMuls below read the int8 weights themselves
        if n.op_type != "MatMul" or n.input[1] not in dq or any(k in n.name for k in skip):
            if n.op_type == "MatMul" and n.input[1] in dq:  # kept in float: its weight dequantized at load
                d = dq[n.input[1]]
                q = numpy_helper.to_array(inits[d.input[0]]).astype(np.float32)
                new_inits.append(numpy_helper.from_array(q * numpy_helper.to_array(inits[d.input[1]])[None, :],
                                                         n.input[1]))
            nodes.append(n)
            continue
        d = dq[n.input[1]]
        w_q, w_scale, w_zp = d.input[:3]
        x, p = n.input[0], n.name
        stored_rows = list(rows.get(n.input[1], []))
        more = [c for c in (extra or {}).get(x, []) if c not in stored_rows]
        out = n.output[0]
        if more:  # these channels' product in float, beside the int8 one
            wq = numpy_helper.to_array(inits[w_q]).astype(np.float32)
            ws = numpy_helper.to_array(inits[w_scale]).astype(np.float32)
            idx = np.array(sorted(more), dtype=np.int64)
            new_inits += [numpy_helper.from_array(idx, p + "_more_idx"),
                          numpy_helper.from_array(wq[idx, :] * ws[None, :], p + "_more_w")]
            nodes += [helper.make_node("Gather", [x, p + "_more_idx"], [p + "_more_x"], name=p + "_more_gather", axis=-1),
                      helper.make_node("MatMul", [p + "_more_x", p + "_more_w"], [p + "_more_y"], name=p + "_more_mm"),
                      helper.make_node("Add", [p + "_int8_y", p + "_more_y"], [out], name=p + "_more_add")]
            out = p + "_int8_y"
        if stored_rows or more:  # the outlier channels, zeroed: their product is a float path
            key = (x, tuple(sorted(stored_rows + more)))
            if key not in masks:
                width = numpy_helper.to_array(inits[w_q]).shape[0]
                keep = np.ones(width, dtype=np.float32)
                keep[list(key[1])] = 0.0
                name = f"{x}_inliers{len(masks)}"
                new_inits.append(numpy_helper.from_array(keep, name + "_mask"))
                nodes.append(helper.make_node("Mul", [x, name + "_mask"], [name], name=name))
                masks[key] = name
            x = masks[key]
        second = any(k in n.name for k in two_pass)
        # one quantization of an activation for every MatMul that reads it (q, k and v read the same)
        a = f"{x}_q8"
        if (x, second) not in quantized:
            quantized[(x, second)] = a
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [a + "_xq", a + "_xs", a + "_xzp"],
                                          name=a + "_quant"))
            if second:  # what the first pass rounded away, quantized again (its scale 1/254 of the first's)
                if "two_254" not in {t.name for t in new_inits}:
                    new_inits += [numpy_helper.from_array(np.array(254.0, np.float32), "two_254"),
                                  numpy_helper.from_array(np.array(128, np.uint8), "two_zp")]
                nodes += [
                    helper.make_node("DequantizeLinear", [a + "_xq", a + "_xs", a + "_xzp"], [a + "_xhat"],
                                     name=a + "_xhat"),
                    helper.make_node("Sub", [x, a + "_xhat"], [a + "_r"], name=a + "_r"),
                    helper.make_node("Div", [a + "_xs", "two_254"], [a + "_rs"], name=a + "_rs"),
                    helper.make_node("QuantizeLinear", [a + "_r", a + "_rs", "two_zp"], [a + "_rq"], name=a + "_rq"),
                ]
        a = quantized[(x, second)]
        nodes += [
            helper.make_node("MatMulInteger", [a + "_xq", w_q, a + "_xzp", w_zp], [p + "_y32"], name=p + "_mmi"),
            helper.make_node("Cast", [p + "_y32"], [p + "_yf"], name=p + "_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [a + "_xs", w_scale], [p + "_ys"], name=p + "_scales"),
            helper.make_node("Mul", [p + "_yf", p + "_ys"], [p + "_y1" if second else out], name=p + "_scale"),
        ]
        if second:
            nodes += [
                helper.make_node("MatMulInteger", [a + "_rq", w_q, "two_zp", w_zp], [p + "_r32"], name=p + "_rmmi"),
                helper.make_node("Cast", [p + "_r32"], [p + "_rf"], name=p + "_rcast", to=TensorProto.FLOAT),
                helper.make_node("Mul", [a + "_rs", w_scale], [p + "_rys"], name=p + "_rscales"),
                helper.make_node("Mul", [p + "_rf", p + "_rys"], [p + "_y2"], name=p + "_rscale"),
                helper.make_node("Add", [p + "_y1", p + "_y2"], [out], name=p + "_two"),
            ]
    kept = [t for t in g.initializer if t.name not in drop_inits]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    del g.node[:]
    g.node.extend(nodes)
    set_meta(model, "mcqlens.cpu_recipe", name or ("int8x2" if two_pass else "int8"))
    return model
