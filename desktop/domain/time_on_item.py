"""Time on item: how long an annotator worked on an item, read from the edit history.

The rule (like Label Studio's "lead time", which counts the time a task is open): take
one annotator's edits of one item (changes, undos and redos) in history order, and sum
the gaps between consecutive ones, each gap counted up to `IDLE_LIMIT_S` seconds (a
longer gap means the annotator was away; it counts as the limit, not as its length).
One edit alone counts 0 s, and the reading before the first edit leaves no trace in
the history, so the figure is a lower bound.  Because it is derived from stored
history, it is the same after a restart and travels with a merge.
"""
from __future__ import annotations

IDLE_LIMIT_S = 300.0


def seconds(timestamps: list[float], idle_limit: float = IDLE_LIMIT_S) -> float:
    """The rule on plain numbers (seconds, in history order): what the store computes in SQL."""
    return sum(min(max(b - a, 0.0), idle_limit) for a, b in zip(timestamps, timestamps[1:]))
