"""How `score` cuts its work into batches: the token budget per batch (CPU, CPU layout, GPU),
questions of like length together, and a token sequence already run not run again."""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Sequence

import numpy as np

from inference import formatting

# B × O × T per batch on CPU for a padded graph (one that keeps its attention mask).  Small
# batches are faster there, not slower: a batch's attention scores (sequences × heads × T²)
# must stay in the CPU's caches.  Measured on 40 ExpMRC questions, standard format,
# MiniLM-L6 int8, 2 cores: 2,048 → 6.6 s, 16,384 → 8.0 s, 65,536 → 14.0 s.  A question is
# never split, so one wide question still forms a batch.
DEFAULT_TOKENS_PER_BATCH = 2048
# A graph in the CPU layout (`inference.cpu_graph`) runs every sequence on its own anyway,
# so the batch only sets how many sequences the worker threads share out: one NOTA
# question (4 alternatives + the NOTA text) leaves one of 2 workers idle for its last
# sequence, several questions at once keep both busy.  Default model, first 61 ExpMRC
# questions, alternatives + NOTA text: 2,048 → 16.2 s, 8,192 → 13.2 s, 16,384 → 13.5 s
# (load average ~1).
UNPADDED_TOKENS_PER_BATCH = 8192
GPU_TOKENS_PER_BATCH = 1 << 18  # a GPU needs large batches to be busy


def _sequence_key(ids: Sequence[int], types: Sequence[int]) -> bytes:
    """A 16-byte digest of one encoder input (token ids and token types)."""
    data = np.asarray(ids, dtype=np.int32).tobytes() + np.asarray(types, dtype=np.int8).tobytes()
    return hashlib.blake2b(data, digest_size=16).digest()


def logits_once(runner, enc: formatting.Encoded, rows: Sequence[Sequence[tuple]], seen: dict) -> np.ndarray:
    """`runner.logits(enc)`, but a token sequence already encoded in this call (`seen`) or
    repeated in this batch is not run again: its logit is copied.  Exact: a runner that
    feeds unpadded sequences computes each one on its own.  In the NOTA grid, the NOTA
    text of every cloze question of a passage is the same sequence (passage + NOTA text):
    188 of the 2,782 sequences of ExpMRC dev, 6% of the encoder's work."""
    run_mask = enc.option_mask.copy()
    first: dict[bytes, tuple[int, int]] = {}
    copies = []
    for b, row in enumerate(rows):
        for o, (ids, types) in enumerate(row):
            key = _sequence_key(ids, types)
            if key in seen or key in first:
                run_mask[b, o] = False
                copies.append((b, o, key))
            else:
                first[key] = (b, o)
    if not copies:
        logits = runner.logits(enc)
    else:
        logits = runner.logits(dataclasses.replace(enc, option_mask=run_mask))
    for key, (b, o) in first.items():
        seen[key] = logits[b, o]
    for b, o, key in copies:
        logits[b, o] = seen[key]
    return logits


def length_batches(order: Sequence[int], n_options: Sequence[int], width: Sequence[int],
                   tokens_per_batch: int) -> list[list[int]]:
    """Consecutive runs of `order` (questions sorted by width) whose padded size —
    questions × widest option count × widest sequence — stays within the token budget;
    a question wider than the budget forms a batch of its own."""
    batches, start = [], 0
    while start < len(order):
        end, n_opt = start + 1, n_options[order[start]]
        while end < len(order) and (end + 1 - start) * max(n_opt, n_options[order[end]]) * width[order[end]] \
                <= tokens_per_batch:
            n_opt = max(n_opt, n_options[order[end]])
            end += 1
        batches.append(list(order[start:end]))
        start = end
    return batches
