"""`ModelReview`'s side of the model's thread (`ScoringWorker`): loading the model, waiting
for the open item (`settle`), rescoring it, the evidence tally's reads, what-if.

The worker computes and stores (through a connection of its own); what arrives from each
stage is shown by `review_queue.py` (in a read-only window it is shown, never stored).  A
mixin of `ModelReview` (`model/review.py`).
"""
from __future__ import annotations

import html
import os
import time
from pathlib import Path

from desktop.ui.kit import colors
from desktop.app import model_scoring as ms
from desktop.domain.model import Dataset, Passage
from desktop.ui.model.scoring_worker import ScoringWorker


class WorkerWiring:
    """The model's thread, seen from the window (mixed into `ModelReview`)."""

    def use_model_dir(self, model_dir: str | Path) -> None:
        """Load another model (Model → Choose the model directory…): a new worker, the panel reloads."""
        self.worker.stop()
        self.model_dir = Path(model_dir)
        self.model, self.model_error, self.view = None, None, None
        self.panel.set_title(None)
        self.panel.set_status(f"loading the model from {self.model_dir}…")
        for b in (self.panel.whatif.nota, self.panel.whatif.text):
            b.setEnabled(True)
        self._start_worker()

    def _start_worker(self) -> None:
        self.worker = ScoringWorker(self.model_dir, **self.queue_control.worker_options())
        self.worker.modelReady.connect(self._model_ready)
        self.worker.modelFailed.connect(self._model_failed)
        self.worker.stageReady.connect(self.queue_control.stage_ready)
        self.worker.itemFailed.connect(self._item_failed)
        self.worker.whatifScored.connect(self._whatif_scored)
        self.worker.jobDone.connect(self._job_done)
        self.worker.queueChanged.connect(self.queue_control.queue_changed)
        self.worker.set_paused(self.queue_control.paused)
        self.worker.start()

    def _model_ready(self, model) -> None:
        self.model = model
        self.model_error = None
        # once the model is there (not when the window is built: a wrong --item or --tab is refused
        # first, with its one error line), and again after Model > Choose the model…
        ms.say_which_model(model.directory)
        runner = model.runner
        device = "GPU" if getattr(runner, "on_gpu", False) else "CPU"
        self.panel.set_title(model.card.name, f"{device}, {getattr(runner, 'precision', '')} graph".strip(", "))
        self.panel.title.setToolTip(f"{model.directory}\n{model.message}")
        self.panel.set_status("")
        self.queue_control.show_state()
        self.window.navigator.model.set_marks(self.queue_control.marks_for(model.id))
        st = self.window.state
        if st is not None:
            self.show(st, new_item=False, request=True)
            self.queue_control.replan()
        self._start_tally()

    def _read_evidence_items(self):
        """A function for the worker: the items with model evidence (the only ones the tally
        counts), with this annotator's annotations and their passages, read through a connection
        of its own when the database is a file; never the whole bank."""
        backend = self.backend
        path, shared, me = backend.path, backend.store, backend.annotator

        def read():
            own = path not in (None, "", ":memory:") and os.path.exists(path)
            store = backend.open_again(read=True) if own else shared
            try:
                passages: dict[str, Passage] = {}
                ids = store.model_outputs.predicted_items(with_evidence=True)
                for k in range(0, len(ids), 500):
                    for q in store.questions(ids[k:k + 500], annotator=me):
                        if q.passage_id not in passages:
                            passages[q.passage_id] = store.passage(q.passage_id)
                            passages[q.passage_id].questions = []
                        passages[q.passage_id].questions.append(q)
                return [Dataset(source="items with model evidence", passages=list(passages.values()))]
            finally:
                if own:
                    store.close()
        return read

    def _start_tally(self) -> None:
        read, me, model_id = self._read_evidence_items(), self.backend.annotator, self.model.id
        self.worker.run_job("tally", lambda: ms.agreement_over(read(), me, model_id))

    def _job_done(self, name: str, result) -> None:
        if name == "tally" and result is not None:
            f1, decisions = result
            # what this session already recorded is newer than the database read
            self.tally.f1 = {**f1, **self.tally.f1}
            self.tally.decisions = {**decisions, **self.tally.decisions}
            self.tally_loaded = True
            self.panel.evidence.set_tally(self.tally.summary())

    def _model_failed(self, message: str) -> None:
        self.model_error = message
        self.queue_control.model_state.setText("model: none")
        self.queue_control.model_state.setToolTip(message)
        self.panel.set_title(None)
        self.panel.set_status(
            f"<b>No model:</b> {html.escape(message)}.<br>Put a model directory at <code>models/default/</code> "
            "(mcqlens train) or start with <code>mcqlens gui --model DIR</code>. Everything else works without it"
            + ("; predictions already stored are shown below." if self.view else "."))
        for b in (self.panel.whatif.nota, self.panel.whatif.text):
            b.setEnabled(False)
        self.why.show_item(self.window.state)

    def settle(self, timeout: float = 240.0) -> bool:
        """Wait (processing events) until the model is loaded and the open item has every stage
        it lacked (probabilities, evidence) on screen; the items ahead may still be scored.

        For `mcqlens gui --screenshot`, which renders once; the interactive window never waits.
        The MPNet reader with its evidence takes 25-45 s for one item on a 2-core CPU without
        VNNI (bench_inference), so the wait is minutes, not the seconds MiniLM needed.
        """
        from PySide6.QtWidgets import QApplication
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            QApplication.processEvents()
            if self.model_error or self.queue_control.paused:
                return True
            if self.model is not None and self._open_settled():
                QApplication.processEvents()  # what the last stage sent is shown
                return True
            time.sleep(0.01)
        return False

    def _open_settled(self) -> bool:
        snap = self.worker.snapshot()
        current = self.window.current
        if current is None:
            return True
        running = snap.get("running")
        return (snap.get("open") == current and snap.get("open_left") == []
                and (running is None or running[0] != current))

    def _item_failed(self, item_id: str, message: str) -> None:
        if self.window.current == item_id or not item_id:
            self.panel.set_status(f"<span style='color:{colors.theme().error}'>{html.escape(message)}</span>")

    def rescore(self) -> None:
        st = self.window.state
        if st is not None and self.model is not None:
            self.panel.set_status("scoring this item…")
            self.worker.request_item(st.question.id, st.question, st.passage_text, rescore=True)

    # ---- what-if -------------------------------------------------------------------------------
    def _show_whatif(self, q, probs) -> None:
        if self._whatif_reset:  # a new item: the scratch copy starts again from its alternatives
            self._whatif_reset = False
            self.panel.whatif.set_item(q.alternatives, q.key, None)
        if probs is not None:
            self.panel.whatif.set_original_probs(probs)

    def _whatif_changed(self, alternatives, nota_index: int) -> None:
        st = self.window.state
        if st is None or self.model is None:
            return
        self._whatif_gen = self.worker.request_whatif(st.question, alternatives,
                                                      None if nota_index < 0 else nota_index)

    def _whatif_scored(self, gen: int, result) -> None:
        if gen == self._whatif_gen:
            self.panel.whatif.show_scratch(result.probabilities)
