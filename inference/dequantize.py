"""Turn an int8 graph back into a float graph, for the GPU.

A shipped model may carry only its int8 graph (small files): weight-only int8 (the
default model: int8 weights rebuilt by constant Cast/Mul/Reshape chains, fp32
arithmetic) or dynamic quantization.  For the latter: ONNX Runtime's CUDA
provider has no kernels for DynamicQuantizeLinear / MatMulInteger / QAttention, so on a
GPU those would run on the CPU.  Here each quantized weight is dequantized
(w = (q − zero point) × scale) and every quantized operator is replaced by its float
original: MatMulInteger chains by MatMul, QAttention by Attention, quantized embedding
lookups by a float Gather.  The result computes with the int8 model's weights in float
arithmetic; `to_fp16` then halves it for the GPU.

Needs the `onnx` package (present wherever onnxruntime's transformer tools are).
"""
from __future__ import annotations

import numpy as np


def _maps(graph):
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list] = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    inits = {t.name: t for t in graph.initializer}
    return producer, consumers, inits


def _array(inits, name):
    from onnx import numpy_helper

    return numpy_helper.to_array(inits[name])


def _dequantized(inits, q_name, scale_name, zp_name, axis_len=None) -> np.ndarray:
    q = _array(inits, q_name).astype(np.float32)
    scale = _array(inits, scale_name).astype(np.float32)
    zp = _array(inits, zp_name).astype(np.float32) if zp_name and zp_name in inits else np.float32(0)
    return (q - zp) * scale  # per-tensor or per-column scales broadcast over the last axis


def dequantize_model(model):
    """A float copy of an int8 ONNX model (ModelProto in, ModelProto out).

    Handles both int8 schemes the export writes: dynamic quantization (integer
    operators, below) and weight-only int8 (int8 initializers rebuilt by
    Cast/Mul/Reshape chains, `dequantize_weight_only`).
    """
    import onnx
    from onnx import helper, numpy_helper

    model = dequantize_weight_only(model)  # a copy; unchanged when there are no weight-only chains
    g = model.graph
    producer, consumers, inits = _maps(g)
    new_inits, remove, add = [], set(), []

    def float_weight(name, array):
        fname = name.replace("_quantized", "") + "_dequantized"
        if fname not in {t.name for t in new_inits}:
            new_inits.append(numpy_helper.from_array(array.astype(np.float32), fname))
        return fname

    for n in list(g.node):
        if n.op_type == "MatMulInteger":
            dql = producer.get(n.input[0])
            if dql is None or dql.op_type != "DynamicQuantizeLinear" or n.input[1] not in inits:
                continue
            cast = next((c for c in consumers.get(n.output[0], []) if c.op_type == "Cast"), None)
            mul = next((c for c in consumers.get(cast.output[0], []) if c.op_type == "Mul"), None) if cast else None
            if mul is None:
                continue
            w_name = n.input[1]
            base = w_name[: -len("_quantized")] if w_name.endswith("_quantized") else w_name
            w = _dequantized(inits, w_name, base + "_scale", n.input[3] if len(n.input) > 3 else None)
            add.append(helper.make_node("MatMul", [dql.input[0], float_weight(w_name, w)], [mul.output[0]],
                                        name=n.name + "_float"))
            remove.update({id(n), id(cast), id(mul)})
        elif n.op_type == "QAttention":
            dql = producer.get(n.input[0])
            if dql is None or dql.op_type != "DynamicQuantizeLinear":
                continue
            w = _dequantized(inits, n.input[1], n.input[4], n.input[7] if len(n.input) > 7 else None)
            inputs = [dql.input[0], float_weight(n.input[1], w), n.input[2], n.input[5] if len(n.input) > 5 else ""]
            attrs = [a for a in n.attribute]
            node = helper.make_node("Attention", inputs, list(n.output), name=n.name + "_float", domain="com.microsoft")
            node.attribute.extend(attrs)
            add.append(node)
            remove.add(id(n))
        elif n.op_type == "DequantizeLinear" and n.input[0] in inits:
            # a constant int8 weight (models.export.mpnet_int8's weight-only recipe): a float initializer
            q = _array(inits, n.input[0]).astype(np.float32)
            scale = _array(inits, n.input[1]).astype(np.float32)
            zp = _array(inits, n.input[2]).astype(np.float32) if len(n.input) > 2 and n.input[2] in inits else 0.0
            axis = int(next((helper.get_attribute_value(a) for a in n.attribute if a.name == "axis"), 1))
            if scale.ndim == 1 and q.ndim > 1:
                shape = [1] * q.ndim
                shape[axis] = -1
                scale = scale.reshape(shape)
                zp = zp.reshape(shape) if isinstance(zp, np.ndarray) else zp
            new_inits.append(numpy_helper.from_array(((q - zp) * scale).astype(np.float32), n.output[0]))
            remove.add(id(n))
        elif n.op_type == "DequantizeLinear":
            gather = producer.get(n.input[0])
            if gather is None or gather.op_type != "Gather" or gather.input[0] not in inits:
                continue
            w = _dequantized(inits, gather.input[0], n.input[1], n.input[2] if len(n.input) > 2 else None)
            add.append(helper.make_node("Gather", [float_weight(gather.input[0], w), gather.input[1]], list(n.output),
                                        name=gather.name + "_float", **{a.name: helper.get_attribute_value(a)
                                                                        for a in gather.attribute}))
            remove.update({id(n), id(gather)})

    kept = [n for n in g.node if id(n) not in remove]
    del g.node[:]
    g.node.extend(kept + add)
    g.initializer.extend(new_inits)
    from inference.int8_weights import merge_rows

    merge_rows(model)  # int8 weights stored with float16 outlier rows (models.export.int8_rows): dense again
    _prune(g)
    model = _topological(model)
    return model


def _prune(g):
    """Drop nodes and initializers nothing uses any more (the quantization leftovers)."""
    outputs = {o.name for o in g.output}
    while True:
        used = {i for n in g.node for i in n.input} | outputs
        dead = [n for n in g.node if not any(o in used for o in n.output)]
        if not dead:
            break
        keep = [n for n in g.node if n not in dead]
        del g.node[:]
        g.node.extend(keep)
    used = {i for n in g.node for i in n.input} | outputs
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)


def _topological(model):
    """Nodes in an order where every input is produced before it is used."""
    g = model.graph
    ready = {i.name for i in g.input} | {t.name for t in g.initializer} | {""}
    pending, ordered = list(g.node), []
    while pending:
        progressed = False
        rest = []
        for n in pending:
            if all(i in ready for i in n.input):
                ordered.append(n)
                ready.update(n.output)
                progressed = True
            else:
                rest.append(n)
        pending = rest
        if not progressed:
            raise ValueError("dequantized graph has a cycle or a missing input")
    del g.node[:]
    g.node.extend(ordered)
    return model


def to_fp16(model):
    """Half-precision weights and arithmetic; graph inputs and outputs keep their types."""
    from onnxruntime.transformers.onnx_model import OnnxModel

    m = OnnxModel(model)
    m.convert_float_to_float16(keep_io_types=True)
    return m.model


def dequantize_weight_only(model):
    """The float graph of a weight-only int8 model (`models.export.quantize.weight_only_int8`).

    Every ``W_int8`` × ``W_scale`` chain (Cast → Mul → Reshape on constants) becomes the
    float initializer ``W`` again, so that the fp16 conversion sees ordinary float
    weights (halving int8 × fp16-scale products exactly as the CPU computes them in
    fp32, then rounding once) and ONNX Runtime's CUDA fusions see plain MatMul weights.
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.ModelProto.FromString(model.SerializeToString())
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    rebuilt = {}
    for n in g.node:
        if n.op_type == "Reshape" and n.name.endswith("_reshape") and n.output[0] + "_int8" in inits:
            w = n.output[0]
            q, s = inits[w + "_int8"].astype(np.float32), inits[w + "_scale"].astype(np.float32)
            rebuilt[w] = (q * s).reshape(inits[w + "_shape"])
    drop_nodes = {f"{w}_{k}" for w in rebuilt for k in ("cast_q", "cast_s", "mul", "reshape")}
    drop_inits = {f"{w}_{k}" for w in rebuilt for k in ("int8", "scale", "shape")}
    nodes = [n for n in g.node if n.name not in drop_nodes]
    del g.node[:]
    g.node.extend(nodes)
    kept = [t for t in g.initializer if t.name not in drop_inits]
    del g.initializer[:]
    g.initializer.extend(kept + [numpy_helper.from_array(v.astype(np.float32), k) for k, v in rebuilt.items()])
    return model
