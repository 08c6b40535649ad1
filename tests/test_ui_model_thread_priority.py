"""The model's thread yields the CPU to the window: on two cores the reader's batches would
otherwise slow every move and search typed while an item is scored (bench_gui).  The worker
lowers its own priority before loading the model, so the threads ONNX Runtime creates for the
session inherit it; the GUI thread keeps the process's priority."""
import os
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")

TINY = Path(__file__).resolve().parent / "data" / "tiny_model"


def _nice(tid: int) -> int:
    # /proc/<pid>/task/<tid>/stat: the 19th field is the nice value (after the command in parentheses)
    stat = Path(f"/proc/self/task/{tid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


def test_the_model_thread_and_its_runtime_threads_run_below_the_window(qtbot):
    from desktop.ui.model.scoring_worker import BACKGROUND_NICE, ScoringWorker

    before = {int(t) for t in os.listdir("/proc/self/task")}
    base = _nice(threading.get_native_id())
    worker = ScoringWorker(TINY)
    with qtbot.waitSignal(worker.modelReady, timeout=60_000):
        worker.start()
    try:
        tid = worker._thread.native_id
        assert _nice(tid) == min(19, base + BACKGROUND_NICE)
        assert _nice(threading.get_native_id()) == base  # the GUI thread keeps its priority
        new = {int(t) for t in os.listdir("/proc/self/task")} - before - {tid}
        # whatever threads the session made while loading run below the window too
        assert all(_nice(t) == min(19, base + BACKGROUND_NICE) for t in new), {t: _nice(t) for t in new}
    finally:
        worker.stop()
