"""Running a graph in the CPU layout (`inference.cpu_graph`), which is exact only for unpadded
input: each sequence of a [B, O, T] batch runs on its own, trimmed to its length (sequences of
equal length share a run), several runs at once on a small thread pool with one ONNX Runtime
thread each: on 2 cores two concurrent single-threaded runs beat one run on two threads
(MiniLM-L6 int8, a standard question: 96 vs 103 ms median).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from inference.formatting import Encoded


def graph_is_unpadded(session) -> bool:
    """Whether a loaded graph must be fed unpadded sequences (`inference.cpu_graph`)."""
    from inference.cpu_graph import UNPADDED

    return session.get_modelmeta().custom_metadata_map.get(UNPADDED) == "1"


# Sequences of equal length share a run up to this many tokens.  That pays for short ones
# only (MiniLM-L6 int8, 1 thread, 40 tokens: 4.3 ms alone, 3.5 ms each four at a time; 460
# tokens: 58 ms either way), and a shared run is one worker's: a question whose four
# alternatives had the same length once ran all four on one worker (p95 183 → 114 ms).
MAX_TOKENS_PER_RUN = 512


def unpadded_logits(run, enc: Encoded, names, pool: ThreadPoolExecutor | None = None, workers: int = 1,
                    max_tokens: int = MAX_TOKENS_PER_RUN) -> np.ndarray:
    """[B, O] float32 logits of a graph fed each sequence trimmed to its own length.

    `run(feeds) -> logits` runs the graph on [1, k, L] arrays (k sequences of length L).
    Padding options are not run (their logit is 0 here; the caller masks them).  Runs go
    to `pool` (of `workers` threads) when given, the longest first, so that the workers
    finish together; a group of equal lengths is split so that every worker gets a share.
    """
    feeds = enc.feeds(names)
    lengths = enc.lengths if enc.lengths is not None else enc.attention_mask.sum(-1)
    groups: dict[int, list[tuple[int, int]]] = {}
    for b, o in zip(*np.nonzero(enc.option_mask)):
        groups.setdefault(int(lengths[b, o]), []).append((int(b), int(o)))
    workers = workers if pool is not None else 1
    tasks = []
    for length, cells in groups.items():
        k = max(1, min(max_tokens // max(length, 1), -(-len(cells) // workers)))
        for i in range(0, len(cells), k):
            part = np.array(cells[i:i + k])
            tasks.append((length, part[:, 0], part[:, 1]))
    tasks.sort(key=lambda t: -t[0] * len(t[1]))

    def one(task):
        length, bs, os_ = task
        return np.asarray(run({n: np.ascontiguousarray(a[bs, os_, :length][None]) for n, a in feeds.items()}))

    out = np.zeros(enc.option_mask.shape, dtype=np.float32)
    results = pool.map(one, tasks) if pool is not None and len(tasks) > 1 else map(one, tasks)
    for (length, bs, os_), got in zip(tasks, results):
        out[bs, os_] = got.reshape(-1)
    return out
