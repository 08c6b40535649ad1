"""Per-row (per-token) symmetric u8 activation quantization on a single-pass int8 graph."""
import numpy as np
from onnx import helper, numpy_helper, TensorProto

def mutate(model, layers=None):
    g = model.graph
    cons = {}
    for n in g.node:
        for i in n.input: cons.setdefault(i, []).append(n)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    g.initializer.extend([numpy_helper.from_array(np.array(1/127, np.float32), "row_inv127"),
                          numpy_helper.from_array(np.array(128.0, np.float32), "row_128f"),
                          numpy_helper.from_array(np.array(1e-8, np.float32), "row_eps"),
                          numpy_helper.from_array(np.array(128, np.uint8), "row_zp"),
                          numpy_helper.from_array(np.array([-1], np.int64), "row_axes")])
    out = []
    rowscale = {}
    for n in g.node:
        if n.op_type != "DynamicQuantizeLinear" or (layers is not None and not any(n.name.startswith(p) or p in n.input[0] for p in layers)):
            out.append(n); continue
        x = n.input[0]; xq, xs, xzp = n.output; a = xq + "_row"
        red = (helper.make_node("ReduceMax", [a + "_abs", "row_axes"], [a + "_m"], name=a + "_m", keepdims=1) if opset >= 18
               else helper.make_node("ReduceMax", [a + "_abs"], [a + "_m"], name=a + "_m", keepdims=1, axes=[-1]))
        out += [helper.make_node("Abs", [x], [a + "_abs"], name=a + "_abs"), red,
                helper.make_node("Max", [a + "_m", "row_eps"], [a + "_m2"], name=a + "_m2"),
                helper.make_node("Mul", [a + "_m2", "row_inv127"], [xs], name=a + "_s"),
                helper.make_node("Div", [x, xs], [a + "_d"], name=a + "_d"),
                helper.make_node("Round", [a + "_d"], [a + "_r"], name=a + "_r"),
                helper.make_node("Add", [a + "_r", "row_128f"], [a + "_r128"], name=a + "_r128"),
                helper.make_node("Cast", [a + "_r128"], [xq], name=a + "_q", to=TensorProto.UINT8)]
        for c in cons.get(xzp, []):
            c.input[list(c.input).index(xzp)] = "row_zp"
        rowscale[xs] = True
    # the product's scale: Cast(MMI)·w_scale, then ·row scale (ORT's MatMulIntegerToFloat takes a scalar a_scale)
    byout = {o: n for n in out for o in n.output}
    final = []
    for n in out:
        if n.op_type == "Mul" and n.name.endswith("_scales") and n.input[0] in rowscale:
            continue
        if n.op_type == "Mul" and (n.name.endswith("_scale")) and n.input[1] in byout and byout[n.input[1]].name.endswith("_scales") and byout[n.input[1]].input[0] in rowscale:
            sc = byout[n.input[1]]
            final += [helper.make_node("Mul", [n.input[0], sc.input[1]], [n.output[0] + "_w"], name=n.name + "_w"),
                      helper.make_node("Mul", [n.output[0] + "_w", sc.input[0]], [n.output[0]], name=n.name)]
            continue
        final.append(n)
    out = final
    del g.node[:]; g.node.extend(out)
    return model
