"""The Model menu: which model directory the window uses (remembered), and Score all…,
which scores every item (or the items the navigator shows) in a worker thread with a
progress dialog and Cancel.

Scoring is `desktop.commands.score.score_store`, the function behind `mcqlens score`:
the same model loading, the same rows stored, one transaction per chunk, so a
cancelled run keeps what it scored and Score all… again goes on from there.  The
model panel's own actions (accept evidence, rescore the item, …) join this menu
(desktop/ui/model_review.py).  A mixin of `MainWindow`.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog

from desktop.ui.dialog_kit import FOLDER, wrapping

from desktop.domain.words import count

MODEL_DIR_KEY = "model_dir"
STEPS = 1000  # the progress bar's resolution


def score_in_worker(db_path: str, model_dir: str, items: list[str] | None, cancel: threading.Event, progress):
    """Run in the worker thread: load the model as `mcqlens score` does and score through
    a connection of this thread's own.  Returns the `ScoreRun`."""
    import inference
    from desktop.commands.score import _formats, score_store
    from desktop.store import Store

    progress(f"Loading the model from {model_dir}…")
    model = inference.load_model(model_dir)
    formats = _formats(None, model.formats)
    with Store.open(db_path, create=False) as store:
        def started(run):
            progress(f"{run.to_score} of {count(run.questions, 'question')} to score with {model.card.name}; "
                     f"{run.already} already have its scores (kept)")

        def chunk_stored(run):
            progress(f"Scored and stored {run.scored} of {count(run.to_score, 'question')}…")

        return score_store(store, model, formats, items=items, cancel=cancel.is_set, on_start=started,
                           on_chunk=chunk_stored, progress=lambda done, total: progress(done, total, 0))


class ModelMenu:
    def _build_model_menu(self) -> None:
        menu = self.menuBar().addMenu("Mo&del")
        self.model_menu = menu
        self.choose_model_action = self._action(menu, "Choose the model &directory…", lambda: self.choose_model_dir())
        self.score_all_action = self._action(menu, "&Score all items…", lambda: self.score_all())
        self.score_shown_action = self._action(menu, "Score the items &shown (filtered)…",
                                               lambda: self.score_all(only_shown=True))
        menu.addSeparator()
        self.score_runner = None
        self._score_when_loaded: bool | None = None  # Score all asked while the panel loads the model
        self.score_progress: QProgressDialog | None = None
        self.last_score_run = None

    # ---- the model directory -------------------------------------------------------------------
    def remembered_model_dir(self) -> str | None:
        """The directory chosen in an earlier session, unless `mcqlens gui --model` names one."""
        from desktop.ui.model_scoring import MODEL_ENV

        if os.environ.get(MODEL_ENV) or self.settings is None:
            return None
        path = str(self.settings.value(MODEL_DIR_KEY, "") or "")
        return path if path and os.path.isdir(path) else None

    def model_dir(self) -> str:
        review = getattr(self, "model_review", None)
        if review is not None:
            return str(review.model_dir)
        from desktop.ui.model_scoring import default_model_dir

        return self.remembered_model_dir() or str(default_model_dir())

    def choose_model_dir(self, path: str | None = None) -> bool:
        """Use the model in `path` (asked for when not given) from now on, and remember it."""
        if path is None:
            path = self.path_chooser(self, "Choose the model directory", FOLDER, self.model_dir(), "")
            if not path:
                return False
        if not (Path(path) / "card.json").is_file():
            self._error(f"{path} is not a model directory: it has no card.json "
                        "(a model directory holds card.json, tokenizer.json and an .onnx graph).")
            return False
        if self.settings is not None:
            self.settings.setValue(MODEL_DIR_KEY, str(path))
            self.settings.sync()
        review = getattr(self, "model_review", None)
        if review is not None:
            review.use_model_dir(path)
        self.tell(f"Model directory: {path}")
        return True

    # ---- score all -----------------------------------------------------------------------------
    def score_all(self, only_shown: bool = False) -> bool:
        """Score every item (or those the navigator shows) in a worker; False if it cannot start."""
        if self.score_runner is not None and self.score_runner.busy:
            self.tell("Scoring is already running.")
            return False
        if self.backend.path in (None, "", ":memory:"):
            self._error("Score all works on a database file; this window's database is in memory.")
            return False
        model_dir = self.model_dir()
        if not (Path(model_dir) / "card.json").is_file():
            self._error(f"No model in {model_dir}: choose one with Model → Choose the model directory….")
            return False
        review = getattr(self, "model_review", None)
        if (review is not None and review.worker.model is None and review.model_error is None
                and Path(review.model_dir) == Path(model_dir)):
            # The panel is loading this model: load it a second time only once that is done (two
            # loads at once derive the same cached CPU graph through the same temporary file).
            self.tell("Score all starts as soon as the model has loaded…")
            first = self._score_when_loaded is None
            self._score_when_loaded = only_shown
            if first:  # slots of the window: queued onto this thread
                review.worker.modelReady.connect(self._model_loaded_for_scoring)
                review.worker.modelFailed.connect(self._model_loaded_for_scoring)
            if review.worker.model is not None:  # it loaded while we were connecting
                self._model_loaded_for_scoring(review.worker.model)
            return True
        self.flush()
        items = self.navigator.visible_items() if only_shown else None
        from desktop.ui.workers import Runner

        self.score_runner = Runner(self)
        self._score_cancel = threading.Event()
        what = f"the {count(len(items), 'item')} shown" if only_shown else "every item"
        dialog = QProgressDialog(f"Scoring {what} with the model in {model_dir}…", "Cancel", 0, STEPS, self)
        dialog.setWindowTitle("Score all")
        dialog.setAccessibleName("Scoring progress")
        dialog.setAccessibleDescription("How many of the questions the model has scored; Cancel keeps what is "
                                        "scored, and Score all again goes on from there")
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.setMinimumDuration(0)
        dialog.setWindowModality(Qt.NonModal)  # the annotator keeps working while the corpus is scored
        dialog.setLabel(wrapping(f"Scoring {what} with the model in {model_dir}…", "Scoring progress"))
        dialog.setMinimumWidth(480)
        dialog.canceled.connect(self._score_cancel.set)
        self.score_progress = dialog
        self.score_runner.progressed.connect(dialog.setLabelText)
        self.score_runner.advanced.connect(self._score_advanced)
        self.score_runner.finished.connect(self._score_finished)
        self.score_runner.failed.connect(self._score_failed)
        dialog.show()
        self.score_runner.start(score_in_worker, self.database_where(), model_dir, items, self._score_cancel)
        return True

    def _model_loaded_for_scoring(self, _model_or_message) -> None:
        """The panel's model has loaded (or failed to): the Score all asked for meanwhile starts."""
        only_shown, self._score_when_loaded = self._score_when_loaded, None
        worker = self.model_review.worker
        for signal in (worker.modelReady, worker.modelFailed):
            try:
                signal.disconnect(self._model_loaded_for_scoring)
            except (RuntimeError, TypeError):
                pass
        if only_shown is not None:
            self.score_all(only_shown)

    def stop_scoring(self) -> None:
        """Cancel a Score all run (the window closes): what is stored stays."""
        if getattr(self, "_score_cancel", None) is not None:
            self._score_cancel.set()

    def _score_advanced(self, done: float, total: int, _records: int) -> None:
        dialog = self.score_progress
        if dialog is not None:
            # setLabelText first: a modal progress dialog's setValue processes events, and the run's
            # end may be among them (it closes the dialog)
            dialog.setLabelText(f"Scored {int(done)} of {total} (question, format) pairs")
            dialog.setValue(int(STEPS * min(done / max(total, 1), 1.0)))

    def _score_finished(self, run) -> None:
        self.last_score_run = run
        self._score_closed()
        self.tell("Model scores: " + run.summary())
        review = getattr(self, "model_review", None)
        st = self.state
        if st is not None:
            st.question.predictions = self.backend.store.predictions(st.question.id)
            if review is not None:
                review.show(st, new_item=False, request=False)
        if self._want_facts:
            self.start_facts()

    def _score_failed(self, exc) -> None:
        self._score_closed()
        self._error(f"Scoring stopped: {exc}. What was scored before is kept; Score all again goes on.")

    def _score_closed(self) -> None:
        if self.score_progress is not None:
            self.score_progress.canceled.disconnect(self._score_cancel.set)
            self.score_progress.close()
            self.score_progress = None
