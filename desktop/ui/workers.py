"""Run plain functions off the GUI thread and get their results back on it (Orange3's runner).

The function receives a `progress(text)` callable; the result or the exception
arrives through Qt signals, which Qt queues onto the GUI thread.  Starting a new
task makes the previous one's result be ignored (it cannot be interrupted, but
it can no longer reach the window).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal


class Runner(QObject):
    progressed = Signal(str)
    finished = Signal(object)  # the result
    failed = Signal(object)  # the exception

    def __init__(self, parent=None):
        super().__init__(parent)
        self._generation = 0
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, fn: Callable[..., Any], *args, **kwargs) -> None:
        self._generation += 1
        generation = self._generation

        def progress(text: str) -> None:
            if generation == self._generation:
                self.progressed.emit(text)

        def work() -> None:
            try:
                result = fn(*args, progress=progress, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - reported to the window in words
                if generation == self._generation:
                    self.failed.emit(exc)
                return
            if generation == self._generation:
                self.finished.emit(result)

        self._thread = threading.Thread(target=work, name="mcqlens-worker", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self._generation += 1

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
