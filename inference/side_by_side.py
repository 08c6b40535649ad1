"""The questions of one call side by side on the CPU, one thread each.

A one-sequence model runs a lone question on all its threads (the panel waits for that one
question).  A call with many sequences — a scoring run, an item's occluded copies for its
give-away words, the passage without each of its evidence candidates — keeps the CPU busier
when its questions run at the same time, each on one thread: on the 2-core AMD 25.5 ms a
shortcut copy against 31-42 ms one at a time on both threads, and the standard format
205-238 ms against 219-261 (docs/bench_runs/trials/side-by-side-20261128).  Every question still
runs alone in its own run, so its numbers are those it gets by itself: ONNX Runtime splits a
product between threads by rows and columns, never along the sum, and the trial found the
logits and the attention output bit for bit the same.

A second session over the same graph (about 130 MB more memory) gives the single-threaded
runs; it is made at load beside the first, so loading takes 0.2-0.7 s longer (2 cores) and the
first scoring call does not wait for it.  MCQLENS_SIDE_BY_SIDE=0 goes without it (a machine short of
memory; the paired measurements).
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Callable

from inference.providers import pool

ENV = "MCQLENS_SIDE_BY_SIDE"  # 0: no second session


def sessions(make: Callable[[int], object], threads: int) -> tuple[object, object | None]:
    """(the session for a lone question on `threads` threads, the single-threaded one for
    questions side by side, or None when `threads` is 1 and the first is that one already).
    The two are made at the same time; an error of either is raised here."""
    if threads <= 1:
        return make(1), None
    if os.environ.get(ENV) == "0":  # no second session: 130 MB less, a call's questions one at a time
        return make(threads), None
    side: dict = {}

    def make_side():
        try:
            side["session"] = make(1)
        except BaseException as exc:  # raised in the caller's thread below
            side["error"] = exc

    worker = threading.Thread(target=make_side, name="mcqlens-ort-load")
    worker.start()
    try:
        main = make(threads)
    finally:
        worker.join()
    if "error" in side:
        raise side["error"]
    return main, side["session"]


def run_all(run: Callable[[object, int], list], count: int, single, side, workers: int) -> list:
    """`run(session, i)` for i in 0..count-1, in order: a lone question on `single`; more than
    one `workers` at a time on `side` (one at a time on `single` without it).  The runs take the
    caller's CPU priority: the window's model thread runs below the window
    (`desktop.ui.model.thread_priority`), and so must the runs it hands to the pool."""
    if count <= 1 or side is None or workers <= 1:
        return [run(single, i) for i in range(count)]
    nice = _nice()

    def one(i: int):
        if nice is not None and (_nice() or 0) < nice:  # a thread may lower its own priority, not raise it
            _set_nice(nice)
        return run(side, i)

    return list(pool(workers).map(one, range(count)))


def _nice() -> int | None:
    """This thread's nice value (Linux: each thread has its own), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except OSError:
        return None


def _set_nice(value: int) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), value)
    except OSError:  # a sandbox may refuse it: the run goes on as it is
        pass
