"""The CPU's arithmetic for a model stored as int8 weights with float16 outlier rows.

The shipped files (`models.int8_rows`) are storage; at load the runtime derives the graph it
runs, in memory, by the CPU's flags:

* ``fp32``: every weight dequantized (`inference.int8_weights.merge_rows`): float arithmetic on
  the stored weights — the float model of the files, and what a CPU without AVX-512 VNNI runs
  (there ONNX Runtime's u8×s8 kernels use VPMADDUBSW, which can saturate, and gain little);
* ``int8``: each stored MatMul becomes ONNX Runtime's dynamic int8 product (DynamicQuantizeLinear
  → MatMulInteger → scale, fused into DynamicQuantizeMatMul: activations quantized per tensor
  at run time, u8 × the stored s8 weights, VNNI/AMX kernels).  The outlier input channels,
  whose rows are stored apart in float, are zeroed before the activation's scale is taken, so a
  channel 100 times the median no longer sets it; their product stays in float.  The word
  embeddings are dequantized at load (a lookup costs nothing).

`choose(flags)` picks int8 where the CPU has AVX-512 VNNI or AVX-VNNI, else fp32; the card may
restrict the recipes it allows (`card.quantization.runtime`), and MCQLENS_CPU_RECIPE forces one.
`models.int8_check`-style agreement on RACE dev decides which recipes a card allows.
"""
from __future__ import annotations

import os

import numpy as np

RECIPES = ("fp32", "int8")
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
    if forced:
        if forced not in allowed:
            return allowed[0], f"{ENV}={forced} is not one of this model's recipes ({', '.join(allowed)})"
        return forced, f"{ENV}={forced}"
    if "int8" in allowed and has_vnni(flags):
        return "int8", "int8 arithmetic: this CPU has VNNI"
    if "int8" in allowed:
        return "fp32", "float arithmetic: this CPU has no VNNI (int8 would not be faster)"
    return allowed[0], f"{allowed[0]} arithmetic (the only recipe this model allows)"


def is_stored(model) -> bool:
    meta = {p.key: p.value for p in model.metadata_props}
    return meta.get("mcqlens.int8_recipe") == "int8-rows"


def derive(stored, recipe: str):
    """The graph (ModelProto) that `recipe` runs, from a stored graph (weights loaded)."""
    if recipe == "fp32":
        from inference.dequantize import dequantize_model

        return dequantize_model(stored)
    if recipe == "int8":
        return dynamic_int8(stored)
    raise ValueError(f"unknown CPU recipe {recipe!r}; expected one of {', '.join(RECIPES)}")


def dynamic_int8(stored, per_row: bool = False, skip: tuple[str, ...] = (), extra: dict | None = None):
    """`extra`: {activation name: input channels} also taken out of the int8 product (their weight
    rows, dequantized, multiply them in float): channels the runtime's calibration found large
    beyond the stored outlier rows."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from inference.cpu_graph import _set_meta
    from inference.int8_weights import rows_of

    model = onnx.ModelProto.FromString(stored.SerializeToString())
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    rows = rows_of(model)
    dq = {n.output[0]: n for n in g.node if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    nodes, new_inits, drop_inits = [], [], set()
    masks: dict[tuple, str] = {}
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
        if per_row:  # one scale per token (row of the activation), symmetric
            # u8 around a zero point of 128 (a scalar, as ONNX Runtime's u8 x s8 kernels want it)
            if "row_eps" not in {t.name for t in new_inits}:
                new_inits += [numpy_helper.from_array(np.array(1e-8 / 127, np.float32), "row_eps"),
                              numpy_helper.from_array(np.array(127.0, np.float32), "row_127"),
                              numpy_helper.from_array(np.array(128.0, np.float32), "row_128f"),
                              numpy_helper.from_array(np.array(128, np.uint8), "row_zero")]
            nodes += [
                helper.make_node("Abs", [x], [p + "_abs"], name=p + "_abs"),
                helper.make_node("ReduceMax", [p + "_abs"], [p + "_amax"], name=p + "_amax", axes=[-1], keepdims=1),
                helper.make_node("Div", [p + "_amax", "row_127"], [p + "_xs0"], name=p + "_xs0"),
                helper.make_node("Max", [p + "_xs0", "row_eps"], [p + "_xs"], name=p + "_xs"),
                helper.make_node("Div", [x, p + "_xs"], [p + "_xn"], name=p + "_xn"),
                helper.make_node("Round", [p + "_xn"], [p + "_xr0"], name=p + "_xr0"),
                helper.make_node("Add", [p + "_xr0", "row_128f"], [p + "_xr"], name=p + "_xr"),
                helper.make_node("Cast", [p + "_xr"], [p + "_xq"], name=p + "_xq", to=TensorProto.UINT8),
                helper.make_node("MatMulInteger", [p + "_xq", w_q, "row_zero", w_zp], [p + "_y32"], name=p + "_mmi"),
                helper.make_node("Cast", [p + "_y32"], [p + "_yf"], name=p + "_cast", to=TensorProto.FLOAT),
                helper.make_node("Mul", [p + "_xs", w_scale], [p + "_ys"], name=p + "_scales"),
                helper.make_node("Mul", [p + "_yf", p + "_ys"], [out], name=p + "_scale"),
            ]
            continue
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [x], [p + "_xq", p + "_xs", p + "_xzp"], name=p + "_quant"),
            helper.make_node("MatMulInteger", [p + "_xq", w_q, p + "_xzp", w_zp], [p + "_y32"], name=p + "_mmi"),
            helper.make_node("Cast", [p + "_y32"], [p + "_yf"], name=p + "_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_xs", w_scale], [p + "_ys"], name=p + "_scales"),
            helper.make_node("Mul", [p + "_yf", p + "_ys"], [out], name=p + "_scale"),
        ]
    kept = [t for t in g.initializer if t.name not in drop_inits]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    del g.node[:]
    g.node.extend(nodes)
    _set_meta(model, "mcqlens.cpu_recipe", "int8")
    return model
