"""Python's cyclic garbage collector runs on the GUI thread only, while the window lives.

CPython collects cycles whenever allocations pass a threshold, in whichever thread is
allocating.  When that is a worker thread (the model panel's scoring thread, the
import/report runner) and the garbage holds a PySide6 object, its C++ destructor runs
there: ``QObject::~QObject`` takes Qt's connection lock, then PySide6 waits for the GIL
— which the GUI thread holds while it waits for that same lock inside, say,
``QLabel.setText``.  Both wait for ever.  Seen in the test suite on 2026-11-26: the
scoring thread collected while decoding JSON in ``Store.load_datasets``; the window
froze in ``MainWindow._saved``.

The usual cure for PyQt/PySide programs with threads: switch automatic collection off
and collect from a timer on the GUI thread, generation by generation, with the
thresholds CPython would have used.  ``install()`` does that once per application.
"""
from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 250  # often enough that garbage never piles up; a check costs microseconds


class MainThreadCollector(QObject):
    """Collects on the GUI thread when CPython's own thresholds say it would have."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS):
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.collections = 0
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        count0, count1, count2 = gc.get_count()
        t0, t1, t2 = self.thresholds
        if count0 <= t0:
            return
        generation = 2 if count2 > t2 and count1 > t1 else 1 if count1 > t1 else 0
        gc.collect(generation)
        self.collections += 1


def install() -> MainThreadCollector | None:
    """The application's collector (made on first call, from the GUI thread); None
    without a QCoreApplication."""
    app = QCoreApplication.instance()
    if app is None:
        return None
    existing = app.findChild(MainThreadCollector)
    if existing is not None:
        return existing
    return MainThreadCollector(app)


def set_aside_startup() -> None:
    """Collect once, then move everything alive into CPython's permanent generation.

    The window's own objects (widgets, the loaded model's Python side, the imports) live
    as long as it does, but a generation-1 or -2 collection walked all of them again:
    12 and 27 ms on a 2-core machine, in the middle of whatever move the timer hit.
    After `gc.freeze()` a collection looks only at what was made since."""
    gc.collect()
    gc.freeze()
