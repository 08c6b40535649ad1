"""The window's one model thread (Orange3's pattern): it loads the model once and does, in this
order, what the window asks of it:

1. what-if (the shortcut format of a scratch copy, as the annotator types);
2. the open item, in stages (`model_stages`: probabilities, evidence, and its give-away
   words while its Why? tab is shown), after the annotator has stayed on it a moment;
3. background jobs (the evidence tally);
4. the items ahead of the open one in the navigator's order and filter (`model_queue`);
5. Model → Score all… (`score_batch`), a chunk at a time.

What it computes it stores itself, through a connection of its own (the window's own,
shared under its lock, for a database in memory), in the rows `mcqlens score` and `mcqlens
explain` store; then it tells the window (`stageReady`), which shows it.  A read-only
window's scores are shown, never stored.  A jump re-targets the queue at once (a stage
running for an item no longer wanted is cancelled through `inference.score`'s `cancel`);
pausing stops it; `stop()` ends the thread after the batch in flight.
"""
from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from desktop.app import model_scoring
from desktop.app import model_stages as stages
from desktop.app.model_queue import ModelQueue, Target
from desktop.domain.errors import McqLensError
from desktop.ui.model.thread_priority import BACKGROUND_NICE, yield_to_the_window  # noqa: F401 - BACKGROUND_NICE: tests

ITEM_SETTLE_S = 0.12  # how long the annotator stays on an item before the model starts on it


# Each snapshot's number, taken under the worker's lock and counted across workers (Model > Choose the
# model… starts a new one): the window shows the newest state even when a snapshot the thread queued
# before a pause arrives after the one the pause sent directly, or an old worker's after a new one's.
_SNAPSHOT_NUMBERS = itertools.count(1)


class ScoringWorker(QObject):
    modelReady = Signal(object)  # the loaded model
    modelFailed = Signal(str)  # why there is no model, in words
    stageReady = Signal(str, str, object)  # item id, stage, rows (list[Prediction]) or Explanation
    itemFailed = Signal(str, str)  # item id, message
    whatifScored = Signal(int, object)  # request number, model_scoring.WhatIf
    jobDone = Signal(str, object)  # name, result of a background job (None if it failed)
    queueChanged = Signal(object)  # what the queue does: model_queue.ModelQueue.snapshot() + "batch"
    batchText = Signal(str)  # Score all: a line on its progress (emitted in the model's thread)
    batchAdvanced = Signal(float, int)  # Score all: (question, format) pairs done, total
    batchDone = Signal(object)  # Score all: the ScoreRun
    batchFailed = Signal(object)  # Score all: the exception

    def __init__(self, model_dir, parent=None, store_opener: Callable[[], tuple[Any, bool]] | None = None,
                 writable: bool = True):
        super().__init__(parent)
        self.model_dir = model_dir
        self.model = None
        self.queue = ModelQueue()
        self.writable = writable
        self._store_opener = store_opener  # () -> (store, own): called in the model's thread
        self._store = None
        self._own_store = False
        self._cond = threading.Condition()
        self._cancel_gen = 0
        self._moved_at = 0.0
        self._whatif: tuple[int, Any, list[str], int | None] | None = None
        self._whatif_gen = 0
        self._jobs: list[tuple[str, Callable[[], Any]]] = []
        self._batch = None
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="mcqlens-model", daemon=True)

    def start(self) -> None:
        """Start loading the model; connect the signals first (a missing model fails at once)."""
        self._thread.start()

    # ---- requests (GUI thread) -------------------------------------------------------
    def request_item(self, item_id: str, question, passage_text: str, rescore: bool = False) -> None:
        """The open item (its stages come first); the same item again only refreshes its data."""
        with self._cond:
            if self.queue.set_open(Target(item_id, question, passage_text, need=None, rescore=rescore)):
                self._moved_at = time.monotonic()
                self._retarget()
            self._cond.notify()
        self._changed()

    def cancel_item(self) -> None:
        with self._cond:
            self.queue.clear_open()
            self._retarget()
        self._changed()

    def set_ahead(self, item_ids: list[str]) -> None:
        """The items after the open one, in the navigator's order (re-planned on every move,
        filter or order change)."""
        with self._cond:
            self.queue.set_ahead(list(item_ids) if self.writable else [])
            self._retarget()
            self._cond.notify()
        self._changed()

    def want_giveaway(self, item_id: str | None) -> None:
        """The Why? tab shows `item_id` (None: hidden): its give-away words come next."""
        with self._cond:
            self.queue.why = item_id
            t = self.queue.open
            if item_id and t is not None and t.item_id == item_id and t.need is not None \
                    and stages.GIVEAWAY not in t.need and (item_id, stages.GIVEAWAY) not in self.queue.done:
                t.need.append(stages.GIVEAWAY)
            self._cond.notify()
        self._changed()

    def set_paused(self, paused: bool) -> None:
        with self._cond:
            self.queue.paused = paused
            if paused:
                self._cancel_gen += 1  # the stage in flight stops at its next batch
            self._cond.notify()
        self._changed()

    def set_hold(self, hold: bool) -> None:
        """The window is busy: nothing new starts until it is done (what runs finishes)."""
        with self._cond:
            if self.queue.hold == hold:
                return
            self.queue.hold = hold
            self._cond.notify()
        self._changed()

    def request_whatif(self, question, alternatives: list[str], nota_index: int | None) -> int:
        with self._cond:
            self._whatif_gen += 1
            self._whatif = (self._whatif_gen, question, list(alternatives), nota_index)
            self._cond.notify()
            return self._whatif_gen

    def run_job(self, name: str, fn: Callable[[], Any]) -> None:
        """Run `fn()` in the worker's thread after the open item; `jobDone` brings the result."""
        with self._cond:
            self._jobs.append((name, fn))
            self._cond.notify()

    def score_batch(self, batch) -> None:
        """Model → Score all… (a `score_batch.ScoreBatch`): after the open item and the items ahead."""
        with self._cond:
            self._batch = batch
            self._cond.notify()
        self._changed()

    def wake(self) -> None:
        """Look again (Score all was cancelled while the thread waited)."""
        with self._cond:
            self._cond.notify()

    @property
    def batch_running(self) -> bool:
        return self._batch is not None

    def stop(self, timeout: float | None = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._cancel_gen += 1
            self._cond.notify()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def snapshot(self) -> dict:
        with self._cond:
            snap = self.queue.snapshot()
            snap["seq"] = next(_SNAPSHOT_NUMBERS)
            snap["batch"] = self._batch.progress() if self._batch is not None else None
        return snap

    def _changed(self) -> None:
        self.queueChanged.emit(self.snapshot())

    def _retarget(self) -> None:
        """(lock held) A stage running for an item the plan no longer wants stops at once."""
        running = self.queue.running
        if running is not None and running[0] not in self.queue.wanted():
            self._cancel_gen += 1

    # ---- the thread -------------------------------------------------------------------
    def _loop(self) -> None:
        yield_to_the_window()
        self._load_model()
        try:
            while True:
                with self._cond:
                    work = self._next()
                if work is None:
                    return
                kind, payload, gen = work
                if kind == "whatif":
                    self._run_whatif(*payload)
                elif kind == "stage":
                    self._run_stage(payload, gen)
                elif kind == "read":
                    self._read(payload)
                elif kind == "job":
                    try:
                        result = payload[1]()
                    except Exception:  # noqa: BLE001 - a job's failure leaves the panel as it was
                        result = None
                    self.jobDone.emit(payload[0], result)
                elif kind == "batch":
                    self._run_batch(payload, gen)
        finally:
            if self._own_store and self._store is not None:
                try:
                    self._store.close()
                except Exception:  # noqa: BLE001 - closing after the window
                    pass

    def _next(self):
        """(lock held) The next piece of work, waiting for one; None to end the thread."""
        while True:
            if self._stop:
                return None
            if self._whatif is not None:
                whatif, self._whatif = self._whatif, None
                return "whatif", whatif, 0
            if self.model is None:  # no model: nothing else can run
                batch, self._batch = self._batch, None
                if batch is not None:
                    self.batchFailed.emit(RuntimeError("no model"))
                self._cond.wait()
                continue
            # an annotator paging quickly through items should not pay for scoring each one
            settle = self._moved_at + ITEM_SETTLE_S - time.monotonic()
            if settle > 0:
                self._cond.wait(settle)
                continue
            q = self.queue
            if self._batch is not None and self._batch.cancel.is_set():
                return "batch", self._batch, self._cancel_gen  # cancelled: ends now, also while paused
            self._prepare_open()
            task = q.open_task()
            if task is not None:
                q.running = (task.target.item_id, task.stage)
                return "stage", task, self._cancel_gen
            if self._jobs:
                return "job", self._jobs.pop(0), 0
            if not (q.paused or q.hold):
                if q.to_read():
                    return "read", q.to_read(), 0
                task = q.next_task()
                if task is not None:
                    q.running = (task.target.item_id, task.stage)
                    return "stage", task, self._cancel_gen
                if self._batch is not None:
                    return "batch", self._batch, self._cancel_gen
            self._cond.wait()

    def _prepare_open(self) -> None:
        """(lock held) What the open item still lacks, from the data the window gave."""
        t = self.queue.open
        if t is None or t.need is not None:
            return
        if t.rescore:
            t.need = [stages.PROBABILITIES] + ([stages.EVIDENCE] if t.passage_text else [])
        else:
            t.need = stages.needs(self.model, t.question, t.passage_text)
        if self.queue.why == t.item_id and stages.giveaway_served(self.model):
            t.need.append(stages.GIVEAWAY)

    def _load_model(self) -> None:
        try:
            # a window closed while its model loads stops the load before the next part (the
            # default's shortcut reader): the next window's first paint does not wait for it
            self.model = model_scoring.load(self.model_dir, cancel=lambda: self._stop)
        except McqLensError as exc:
            if not self._stop:
                self.modelFailed.emit(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a broken install must not take the window down
            self.modelFailed.emit(f"the model in {self.model_dir} cannot be used ({type(exc).__name__}: {exc})")
            return
        if self._store_opener is not None:
            try:
                self._store, self._own_store = self._store_opener()
            except Exception as exc:  # noqa: BLE001 - the panel still scores the open item
                self._store = None
                self.itemFailed.emit("", f"the model cannot read the database: {exc}")
        self.modelReady.emit(self.model)
        self._changed()

    # ---- the stages ---------------------------------------------------------------------
    def _read(self, item_ids: list[str]) -> None:
        """Read the items ahead and what is stored for them (this thread's connection)."""
        got: list[Target] = []
        store = self._store
        if store is not None:
            try:
                served = stages.giveaway_served(self.model)
                texts: dict[str, str] = {}
                for q in store.questions(item_ids, annotator=store.annotator):
                    if q.passage_id not in texts:
                        texts[q.passage_id] = store.passage(q.passage_id).text
                    text = texts[q.passage_id]
                    current = stages.explanation_is_current(store, self.model, q) if served else None
                    got.append(Target(q.id, q, text, need=stages.needs(self.model, q, text, current)))
            except Exception as exc:  # noqa: BLE001 - the database closed or locked: nothing ahead now
                self.itemFailed.emit("", f"reading the items ahead: {exc}")
                got = []
        with self._cond:
            self.queue.add_read(got, item_ids)
        self._changed()

    def _run_stage(self, task, gen: int) -> None:
        t, stage, model = task.target, task.stage, self.model
        cancel = lambda: self._stop or gen != self._cancel_gen  # noqa: E731
        self._changed()
        payload, ok = None, True
        try:
            if stage == stages.PROBABILITIES:
                got = stages.score_probabilities(model, t.question, t.passage_text, cancel, rescore=t.rescore)
                if got is None:
                    ok = not cancel()  # nothing was missing, or cancelled
                else:
                    t.scores, payload = got
                    t.rescore = False
                    self._store_rows(t.item_id, payload)
            elif stage == stages.EVIDENCE:
                scores = t.scores or stages.scores_from_predictions(model, t.item_id, t.question.predictions)
                if scores is None:  # stored rows without what the evidence needs: a new first stage
                    got = stages.score_probabilities(model, t.question, t.passage_text, cancel, rescore=True)
                    scores = got[0] if got else None
                if scores is None:
                    ok = False
                else:
                    payload = stages.score_evidence(model, scores, t.question, t.passage_text)
                    self._store_rows(t.item_id, payload)  # worked out: stored, also when the window closes
            else:
                payload = stages.explain(model, t.question, cancel)
                ok = payload is not None or not cancel()
                if payload is not None and self.writable and self._store is not None:
                    self._store.model_outputs.add_explanations([payload.to_json()])
        except Exception as exc:  # noqa: BLE001 - said in the panel; the queue goes on
            with self._cond:
                self.queue.failed.add(t.item_id)
                self.queue.running = None
            self.itemFailed.emit(t.item_id, str(exc))
            self._changed()
            return
        with self._cond:
            self.queue.running = None
            if ok:
                self.queue.finished(t.item_id, stage)
                if payload is not None:
                    self.queue.computed.append((t.item_id, stage))
        if ok and payload is not None:
            self.stageReady.emit(t.item_id, stage, payload)
        self._changed()

    def _store_rows(self, item_id: str, rows) -> None:
        if self.writable and self._store is not None and rows:
            self._store.add_predictions([(item_id, p) for p in rows])

    def _run_batch(self, batch, gen: int) -> None:
        def preempt() -> bool:
            with self._cond:
                q = self.queue
                return (self._stop or gen != self._cancel_gen or self._whatif is not None or q.paused or q.hold
                        or q.open_task() is not None or bool(q.to_read()) or q.next_task() is not None)
        try:
            if self._store is None:
                raise RuntimeError("the model's thread has no connection to the database")
            over = batch.step(self._store, self.model, preempt)
        except Exception as exc:  # noqa: BLE001 - said in the window; what is stored stays
            with self._cond:
                self._batch = None
            self.batchFailed.emit(exc)
            self._changed()
            return
        if over:
            with self._cond:
                self._batch = None
            self.batchDone.emit(batch.run)
        self._changed()

    def _run_whatif(self, gen: int, question, alternatives: list[str], nota_index: int | None) -> None:
        if self.model is None or gen != self._whatif_gen:
            return
        try:
            result = model_scoring.whatif_shortcut(self.model, question, alternatives, nota_index)
        except Exception as exc:  # noqa: BLE001
            self.itemFailed.emit(question.id, f"what-if: {exc}")
            return
        self.whatifScored.emit(gen, result)
