"""The GPU's graph and batches: an fp16 graph derived from the shipped fp32 or int8 graph (cached
in the user's cache folder), and token lengths padded up to buckets.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from inference.card import ModelCard

# On the GPU, token lengths are padded up to a multiple of this (the attention mask hides
# the padding, so the logits do not change).  ONNX Runtime's CUDA Attention pays 40-80 ms
# the first time it meets a sequence length (measured on an H200: 0.7 ms for a question
# whose shape was seen before, 42-77 ms for a new one, whatever the arena or attention
# kernel settings); with buckets an annotator's questions share 8 lengths per format.
GPU_LENGTH_BUCKET = 64


def bucketed(length: int, bucket: int, cap: int) -> int:
    """`length` rounded up to a multiple of `bucket`, never past `cap` (nor below `length`)."""
    if bucket <= 1:
        return length
    return max(length, min(-(-length // bucket) * bucket, cap))


def pad_to_bucket(feeds: dict[str, np.ndarray], bucket: int, cap: int) -> dict[str, np.ndarray]:
    """[B, O, T] inputs with T padded (zeros: masked, type 0) to its bucket."""
    t = next(iter(feeds.values())).shape[-1]
    width = bucketed(t, bucket, cap)
    if width == t:
        return feeds
    return {n: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - t)]) for n, a in feeds.items()}


def derive_fp16(directory: Path, card: ModelCard) -> Path:
    """An fp16 graph from the shipped fp32 graph (or the int8 one, dequantized).

    Cached in the user's cache folder ($XDG_CACHE_HOME/mcqlens/<model id>/), never in the
    model directory: that may be read-only, or a checkout whose size must not grow.
    Rebuilt when the source graph is newer than the cached one.  A source in the CPU
    layout (`inference.cpu_graph`: attention without a mask) gets its mask back, so that
    the GPU runs padded batches.
    """
    import onnx

    from inference.cpu_graph import cache_folder, is_unpadded, padded
    from inference.dequantize import dequantize_model, to_fp16

    source = directory / card.files.get("fp32", card.files.get("int8", ""))
    cache = cache_folder(card)
    target = cache / "model.fp16.onnx"
    if target.is_file() and target.stat().st_mtime >= source.stat().st_mtime:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    model = onnx.load(str(source))
    if "fp32" not in card.files:
        model = dequantize_model(model)
    if is_unpadded(model):
        model = padded(model)
    # through a file of this process's own: a killed run never leaves a half-written graph
    # behind, and two processes deriving it at once never write into one file
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        onnx.save(to_fp16(model), str(partial))
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target
