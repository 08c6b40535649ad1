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
import time

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 250  # often enough that garbage never piles up; a check costs microseconds
PAUSE_S = 0.5  # no move through the items for this long: a pause, time for a longer collection
MAX_WAIT_S = 5.0  # a longer collection waits for a pause at most this long
_last_activity = [0.0]  # monotonic time of the last move (`busy()`)


def busy() -> None:
    """The annotator just moved to another item: longer collections wait for a pause."""
    _last_activity[0] = time.monotonic()


class MainThreadCollector(QObject):
    """Collects on the GUI thread when CPython's own thresholds say it would have."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS):
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.collections = 0
        self._waiting_since = time.monotonic()
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
        if generation and not self._may_take_long():
            generation = 0  # the young objects now, the older ones in the next pause
        gc.collect(generation)
        self.collections += 1

    def _may_take_long(self) -> bool:
        """Whether a collection of the older generations (tens of ms: they hold the window's
        widgets) may run now: in a pause of the annotator's, or after waiting `MAX_WAIT_S`."""
        now = time.monotonic()
        if now - _last_activity[0] >= PAUSE_S or now - self._waiting_since >= MAX_WAIT_S:
            self._waiting_since = now
            return True
        return False


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

