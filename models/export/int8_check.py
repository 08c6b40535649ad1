"""Run int8 ONNX graphs on many CPU cores at once: worker processes of one ONNX Runtime thread.

Used where the weights are (the GPU machine's 64 cores) to choose the int8 recipe by its
argmax agreement with float32 on RACE dev, and to evaluate the chosen model directory through
the product's own runtime (`inference.load_model`) on the evaluation sets.
"""
from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import numpy as np

from inference import load_model
from inference.formatting import encode_questions, load_tokenizer
from inference.unpadded import unpadded_logits

_STATE: dict = {}


def _init(kind: str, path: str, tokenizer: str, max_length: int):
    os.environ["MCQLENS_THREADS"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if kind == "dir":  # the product's runtime over a model directory
        model = load_model(path, device="cpu", threads=1)
        _STATE.update(run=model.runner.logits, tokenizer=model.tokenizer, max_length=model.card.max_length)
        return
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    _STATE.update(run=lambda enc: unpadded_logits(lambda f: sess.run(["logits"], f)[0], enc, names),
                  tokenizer=load_tokenizer(tokenizer), max_length=max_length)


def _score(task):
    fmt, questions = task
    enc = encode_questions(_STATE["tokenizer"], questions, fmt, _STATE["max_length"])
    z = np.asarray(_STATE["run"](enc), dtype=np.float64)
    return [row[: len(q[2])].tolist() for row, q in zip(z, questions)]


def logits(kind: str, path: str | Path, records: list[dict], formats: list[str], processes: int,
           tokenizer: str | Path = "", max_length: int = 512, chunk: int = 4) -> dict[tuple[str, str], list]:
    """{(record id, format): logits} of `records` scored by a graph file (kind "graph") or a
    model directory through `inference.load_model` (kind "dir"), `processes` at a time."""
    tasks, keys = [], []
    for fmt in formats:
        for i in range(0, len(records), chunk):
            part = records[i:i + chunk]
            tasks.append((fmt, [(r["passage"], r["stem"], r["alternatives"]) for r in part]))
            keys.append([(r["id"], fmt) for r in part])
    with mp.get_context("spawn").Pool(processes, initializer=_init,
                                      initargs=(kind, str(path), str(tokenizer), max_length)) as pool:
        results = pool.map(_score, tasks, chunksize=1)
    out = {}
    for ks, rows in zip(keys, results):
        out.update(zip(ks, rows))
    return out


def agreement(ref: dict, got: dict) -> dict[str, float]:
    """Per format: the share of questions whose argmax is the same in both."""
    by: dict[str, list[int]] = {}
    for (rid, fmt), z in got.items():
        r = ref.get((rid, fmt))
        if r is None:
            continue
        by.setdefault(fmt, []).append(int(np.argmax(z) == np.argmax(r)))
    return {f: float(np.mean(v)) for f, v in by.items()}
