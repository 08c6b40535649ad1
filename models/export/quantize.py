"""Weight-only int8 for a fine-tuned reader whose predictions dynamic quantization would change.

ONNX Runtime's dynamic quantization rounds the activations too (one scale per tensor
per call).  For the shipped MiniLM reader the margins between alternatives are small
(median 0.4–0.6 logits) and that rounding moved logits by up to 1.5: the predicted
option changed on 4–11% of dev questions, short of the 99% agreement the export
requires.  Rounding only the weights — one symmetric scale per output channel of every
matrix, one per row of every embedding table — keeps the file at int8 size and leaves
the arithmetic in fp32.

Each large float initializer W becomes ``W_int8`` (int8) + ``W_scale`` and a
``DequantizeLinear`` node whose output keeps W's name, so every consumer (MatMul, the
fused Attention, Gather) is untouched.  Validation uses `models.export.onnx_export.validate_int8`
like every other export.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

MIN_ELEMENTS = 16384  # biases and LayerNorm vectors stay float: tiny, and sensitive
BLOCK = 64  # weights per scale: per-channel scales (one per column) still flipped 1.2% of predictions


def weight_only_int8(fp32_path: str | Path, out_path: str | Path, min_elements: int = MIN_ELEMENTS,
                     block: int = BLOCK) -> dict:
    """Every large 2-D float initializer as int8 with one fp16 scale per `block` weights.

    Blocks run along the input dimension of a matrix ([in, out]: `block` rows of one
    column share a scale) and along the hidden dimension of an embedding table (each
    row's `block` consecutive values share one).  The float weight is rebuilt by
    Cast → Reshape → Mul → Reshape, all on constants, which ONNX Runtime folds when it
    loads the graph: the arithmetic stays fp32, only the file is small.
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(fp32_path))
    g = model.graph
    gather_tables = {n.input[0] for n in g.node if n.op_type == "Gather"}
    keep, add_nodes, add_inits, n_quantized, n_params = [], [], [], 0, 0
    for init in g.initializer:
        arr = numpy_helper.to_array(init)
        rows, cols = arr.shape if arr.ndim == 2 else (0, 0)
        by_row = init.name in gather_tables
        along = cols if by_row else rows
        if arr.dtype != np.float32 or arr.ndim != 2 or arr.size < min_elements or along % block:
            keep.append(init)
            continue
        if by_row:  # [rows, cols/block, block]: scale per (row, block)
            blocks = arr.reshape(rows, cols // block, block)
            scale = np.abs(blocks).max(axis=2, keepdims=True) / 127.0
        else:  # [rows/block, block, cols]: scale per (block, column)
            blocks = arr.reshape(rows // block, block, cols)
            scale = np.abs(blocks).max(axis=1, keepdims=True) / 127.0
        scale = np.where(scale > 0, scale, 1.0).astype(np.float16)
        q = np.clip(np.rint(blocks / scale.astype(np.float32)), -127, 127).astype(np.int8)
        n = init.name
        add_inits += [numpy_helper.from_array(q, n + "_int8"), numpy_helper.from_array(scale, n + "_scale"),
                      numpy_helper.from_array(np.array(arr.shape, dtype=np.int64), n + "_shape")]
        add_nodes += [
            helper.make_node("Cast", [n + "_int8"], [n + "_q"], to=onnx.TensorProto.FLOAT, name=n + "_cast_q"),
            helper.make_node("Cast", [n + "_scale"], [n + "_s"], to=onnx.TensorProto.FLOAT, name=n + "_cast_s"),
            helper.make_node("Mul", [n + "_q", n + "_s"], [n + "_blocks"], name=n + "_mul"),
            helper.make_node("Reshape", [n + "_blocks", n + "_shape"], [n], name=n + "_reshape"),
        ]
        n_quantized += 1
        n_params += arr.size
    del g.initializer[:]
    g.initializer.extend(keep + add_inits)
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(add_nodes + nodes)  # the rebuilt weights exist before anything uses them
    onnx.save(model, str(out_path))
    return {"int8_scheme": f"weight-only int8, symmetric, one fp16 scale per {block} weights "
                           "(along the input dimension of matrices, along rows of embedding tables); "
                           "fp32 arithmetic",
            "int8_tensors": n_quantized, "int8_parameters": int(n_params)}
