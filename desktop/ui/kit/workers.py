"""Run plain functions off the GUI thread and get their results back on it (Orange3's runner).

The function receives a `progress` callable (`progress(text)`, or
`progress(done, total, records)` for a determinate bar); the result or the
exception arrives through Qt signals, which Qt queues onto the GUI thread.
Starting a new task or `cancel()` makes the previous one's result be ignored —
checked again on the GUI thread, so a result already queued when the user
cancelled never arrives — and its next call of `progress` raises `Cancelled`,
which ends it early.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal, Slot


_running = [0]  # Runner tasks running now, in every window: the model's queue waits for them
_running_lock = threading.Lock()


def running_tasks() -> int:
    """How many `Runner` tasks (an import, a report, the navigator's facts…) are running now."""
    return _running[0]


class Cancelled(Exception):
    """Raised inside the worker by its progress callable once the task was cancelled."""


class Runner(QObject):
    progressed = Signal(str)
    advanced = Signal(float, int, int)  # done, total, records (progress called with numbers)
    finished = Signal(object)  # the result
    failed = Signal(object)  # the exception

    # Emitted from the worker thread with the task's generation; delivered on the GUI thread.
    _text = Signal(int, str)
    _numbers = Signal(int, float, int, int)
    _result = Signal(int, object)
    _error = Signal(int, object)

    # Numbers arrive per record; the bar needs no more than this many updates a second.
    ADVANCE_EVERY_S = 0.03

    def __init__(self, parent=None):
        super().__init__(parent)
        self._generation = 0
        self._thread: threading.Thread | None = None
        # Bound slots of this QObject (which lives on the GUI thread), so Qt queues them there.
        self._text.connect(self._on_text)
        self._numbers.connect(self._on_numbers)
        self._result.connect(self._on_result)
        self._error.connect(self._on_error)

    @Slot(int, str)
    def _on_text(self, generation: int, text: str) -> None:
        if generation == self._generation:
            self.progressed.emit(text)

    @Slot(int, float, int, int)
    def _on_numbers(self, generation: int, done: float, total: int, records: int) -> None:
        if generation == self._generation:
            self.advanced.emit(done, total, records)

    @Slot(int, object)
    def _on_result(self, generation: int, result) -> None:
        if generation == self._generation:
            self.finished.emit(result)

    @Slot(int, object)
    def _on_error(self, generation: int, exc) -> None:
        if generation == self._generation:
            self.failed.emit(exc)

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, fn: Callable[..., Any], *args, **kwargs) -> None:
        self._generation += 1
        generation = self._generation
        last = [0.0]

        def progress(*values) -> None:
            if generation != self._generation:
                raise Cancelled()
            if len(values) == 1:
                self._text.emit(generation, str(values[0]))
                return
            done, total, records = values
            now = time.monotonic()
            if done >= total or now - last[0] >= self.ADVANCE_EVERY_S:
                last[0] = now
                self._numbers.emit(generation, float(done), int(total), int(records))

        def work() -> None:
            with _running_lock:
                _running[0] += 1
            try:
                result = fn(*args, progress=progress, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - reported to the window in words
                if generation == self._generation:
                    self._error.emit(generation, exc)
                return
            finally:
                with _running_lock:
                    _running[0] -= 1
            if generation == self._generation:
                self._result.emit(generation, result)

        self._thread = threading.Thread(target=work, name="mcqlens-worker", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self._generation += 1

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
