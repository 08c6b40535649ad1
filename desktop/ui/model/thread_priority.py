"""The model's thread runs below the window's priority (Linux: a thread has its own nice value)."""
from __future__ import annotations

import os
import sys
import threading

BACKGROUND_NICE = 10  # the model thread's niceness above the window's


def yield_to_the_window() -> None:
    """Lower this thread's CPU priority before the model loads, so that the threads ONNX Runtime
    then creates inherit it: on two cores the reader's batches would otherwise take the CPU from
    the GUI thread, and a search or a move typed while an item is being scored waits for them
    (bench_gui: search on all of RACE 63 -> 218 ms with the MPNet reader scoring beside it).
    Linux only: there a thread is a task with its own nice value; elsewhere the call would
    lower the whole process."""
    if not sys.platform.startswith("linux"):
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
    except OSError:  # a sandbox may refuse it: the window works as before
        pass
