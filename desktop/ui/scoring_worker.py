"""One background thread that loads the model and scores for the model panel (Orange3's pattern).

The GUI thread hands plain domain objects to the worker and gets plain results back
through Qt signals, which Qt queues onto the GUI thread; only the GUI thread writes
to the store.  The worker keeps one slot per kind of request — the newest item, the
newest what-if — so a request the annotator has already moved past is replaced
(and, if running, cancelled through `inference.score`'s `cancel`) instead of
queueing up; background jobs (the evidence tally) wait for them.  Scoring the whole
database is Model → Score all… (desktop/ui/menu_model.py), the path of `mcqlens score`.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from desktop.ui import model_scoring

ITEM_SETTLE_S = 0.12  # how long the annotator stays on an item before it is scored
BACKGROUND_NICE = 10  # the model thread's niceness above the window's


def _yield_to_the_window() -> None:
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


class ScoringWorker(QObject):
    modelReady = Signal(object)  # the loaded model
    modelFailed = Signal(str)  # why there is no model, in words
    itemScored = Signal(str, object)  # item id, list[Prediction]
    itemFailed = Signal(str, str)  # item id, message
    whatifScored = Signal(int, object)  # request number, model_scoring.WhatIf
    jobDone = Signal(str, object)  # name, result of a background job (None if it failed)

    def __init__(self, model_dir, parent=None):
        super().__init__(parent)
        self.model_dir = model_dir
        self.model = None
        self._cond = threading.Condition()
        self._item: tuple[int, str, Any, str] | None = None
        self._item_gen = 0
        self._whatif: tuple[int, Any, list[str], int | None] | None = None
        self._whatif_gen = 0
        self._jobs: list[tuple[str, Callable[[], Any]]] = []
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="mcqlens-model", daemon=True)

    def start(self) -> None:
        """Start loading the model; connect the signals first (a missing model fails at once)."""
        self._thread.start()

    # ---- requests (GUI thread) -------------------------------------------------------
    def request_item(self, item_id: str, question, passage_text: str) -> None:
        with self._cond:
            self._item_gen += 1
            self._item = (self._item_gen, item_id, question, passage_text)
            self._cond.notify()

    def cancel_item(self) -> None:
        with self._cond:
            self._item_gen += 1
            self._item = None

    def request_whatif(self, question, alternatives: list[str], nota_index: int | None) -> int:
        with self._cond:
            self._whatif_gen += 1
            self._whatif = (self._whatif_gen, question, list(alternatives), nota_index)
            self._cond.notify()
            return self._whatif_gen

    def run_job(self, name: str, fn: Callable[[], Any]) -> None:
        """Run `fn()` in the worker's thread after the interactive requests; `jobDone` brings the result."""
        with self._cond:
            self._jobs.append((name, fn))
            self._cond.notify()

    def stop(self, timeout: float | None = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._item_gen += 1
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # ---- the thread -------------------------------------------------------------------
    def _loop(self) -> None:
        _yield_to_the_window()
        self._load_model()
        while True:
            with self._cond:
                while not (self._stop or self._item or self._whatif or self._jobs):
                    self._cond.wait()
                if self._stop:
                    return
                whatif, self._whatif = self._whatif, None
                if not whatif and self._item is not None:
                    # An annotator paging quickly through items should not pay for scoring
                    # each one: wait until the item has been stayed on for a moment.
                    gen = self._item_gen
                    while True:
                        self._cond.wait(ITEM_SETTLE_S)
                        if self._stop or self._whatif or self._item_gen == gen:
                            break
                        gen = self._item_gen
                    if self._stop:
                        return
                    whatif, self._whatif = self._whatif, None
                item = None if whatif else self._item
                if item is not None:
                    self._item = None
                job = None
                if not whatif and item is None and self._jobs:
                    job = self._jobs.pop(0)
            if whatif is not None:
                self._run_whatif(*whatif)
            elif item is not None:
                self._run_item(*item)
            elif job is not None:
                try:
                    result = job[1]()
                except Exception:  # noqa: BLE001 - a job's failure leaves the panel as it was
                    result = None
                self.jobDone.emit(job[0], result)

    def _load_model(self) -> None:
        from desktop.domain.errors import McqLensError
        try:
            self.model = model_scoring.load(self.model_dir)
        except McqLensError as exc:
            self.modelFailed.emit(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a broken install must not take the window down
            self.modelFailed.emit(f"the model in {self.model_dir} cannot be used ({type(exc).__name__}: {exc})")
            return
        self.modelReady.emit(self.model)

    def _run_item(self, gen: int, item_id: str, question, passage_text: str) -> None:
        if self.model is None:
            return
        try:
            preds = model_scoring.score_item(self.model, question, passage_text,
                                             cancel=lambda: gen != self._item_gen)
        except Exception as exc:  # noqa: BLE001
            self.itemFailed.emit(item_id, str(exc))
            return
        if preds:  # a cancelled run gives None; a finished one is worth caching even if stale
            self.itemScored.emit(item_id, preds)

    def _run_whatif(self, gen: int, question, alternatives: list[str], nota_index: int | None) -> None:
        if self.model is None or gen != self._whatif_gen:
            return
        try:
            result = model_scoring.whatif_shortcut(self.model, question, alternatives, nota_index)
        except Exception as exc:  # noqa: BLE001
            self.itemFailed.emit(question.id, f"what-if: {exc}")
            return
        self.whatifScored.emit(gen, result)
