"""The Model menu: which model directory the window uses (remembered), and Score all…,
which scores every item (or the items the navigator shows) with a progress dialog and Cancel.

Score all is work of the model panel's own thread and model (`model/scoring_worker.py`: one loaded
model, one queue): the open item and the items ahead of it go first, Score all's chunks in
between.  Each chunk is `desktop.app.score.score_store`, the function behind `mcqlens
score`: the same rows stored, one transaction per chunk, so a cancelled run keeps what it
scored and Score all… again goes on from there.  The model panel's own actions (accept
evidence, rescore the item, pause, score ahead, …) join this menu (desktop/ui/model/review.py,
review_queue.py).

`ModelMenu` is a part of the window (`window.model_menu`), built before the model panel
(`window.model_review`), which adds its actions to `window.model_menu.menu`.  What it uses of
the window: `model_review` (its model and thread), `backend`, `settings`, `navigator`, `state`,
`path_chooser`, `flush`, `start_facts` / `want_facts`, `tell` and `error`.
"""
from __future__ import annotations

import os
import threading
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog

from desktop.ui.dialogs.dialog_kit import FOLDER, wrapping
from desktop.ui.menus.actions import menu_action

from desktop.domain.words import count
from inference.catalog import locate_model, shipped_models

MODEL_DIR_KEY = "model_dir"
STEPS = 1000  # the progress bar's resolution


class ModelMenu:
    def __init__(self, window):
        self.window = window
        self.score_batch = None  # the Score all run in the model's thread (score_batch.ScoreBatch)
        self.score_progress: QProgressDialog | None = None
        self.last_score_run = None
        self._score_cancel: threading.Event | None = None
        self._score_worker = None

    def build(self) -> None:
        """The Model menu, placed next in the menu bar; the model panel adds its actions after these."""
        action = partial(menu_action, self.window)
        menu = self.menu = self.window.menuBar().addMenu("Mo&del")
        self.choose_model_by_name_action = action(menu, "Choose the &model…", lambda: self.choose_model())
        self.choose_model_action = action(menu, "Choose the model &directory…", lambda: self.choose_model_dir())
        self.score_all_action = action(menu, "&Score all items…", lambda: self.score_all())
        self.score_shown_action = action(menu, "Score the items &shown (filtered)…",
                                         lambda: self.score_all(only_shown=True))
        menu.addSeparator()

    # ---- the model directory -------------------------------------------------------------------
    def remembered_model_dir(self) -> str | None:
        """The directory chosen in an earlier session (`inference.catalog.locate_model` weighs it)."""
        if self.window.settings is None:
            return None
        path = str(self.window.settings.value(MODEL_DIR_KEY, "") or "")
        return path if path and os.path.isdir(path) else None

    def model_dir(self) -> str:
        review = getattr(self.window, "model_review", None)
        if review is not None:
            return str(review.model_dir)

        return str(locate_model(None, self.remembered_model_dir()))

    def choose_model(self, name: str | None = None) -> bool:
        """Use one of the shipped models, chosen by name (asked for, with their sizes, when not given);
        the last entry goes on to Choose the model directory…"""
        models = shipped_models()
        other = "Another model directory…"
        labels = [f"{m.name} — {m.max_length} tokens ({m.directory.name})" for m in models] + [other]
        if name is None:
            from PySide6.QtWidgets import QInputDialog

            current = next((i for i, m in enumerate(models)
                            if Path(self.model_dir()).resolve() == m.directory.resolve()), 0)
            label, ok = QInputDialog.getItem(self.window, "Choose the model",
                                             "The model the panel, Score all… and Why? use:", labels, current, False)
            if not ok:
                return False
            if label == other:
                return self.choose_model_dir()
            name = models[labels.index(label)].name
        chosen = next((m for m in models if name in (m.name, m.id, m.directory.name)), None)
        if chosen is None:
            self.window.error(f"No shipped model is called {name!r}; the shipped models: "
                        + ", ".join(m.name for m in models) + ".")
            return False
        return self.choose_model_dir(str(chosen.directory))

    def choose_model_dir(self, path: str | None = None) -> bool:
        """Use the model in `path` (asked for when not given) from now on, and remember it."""
        if path is None:
            path = self.window.path_chooser(self.window, "Choose the model directory", FOLDER, self.model_dir(), "")
            if not path:
                return False
        if not (Path(path) / "card.json").is_file():
            self.window.error(f"{path} is not a model directory: it has no card.json "
                        "(a model directory holds card.json, tokenizer.json and an .onnx graph).")
            return False
        if self.score_batch is not None:
            self.window.error("Score all is running: cancel it (or let it finish) before choosing another model.")
            return False
        if self.window.settings is not None:
            self.window.settings.setValue(MODEL_DIR_KEY, str(path))
            self.window.settings.sync()
        review = getattr(self.window, "model_review", None)
        if review is not None:
            review.use_model_dir(path)
        self.window.tell(f"Model directory: {path}")
        return True

    # ---- score all -----------------------------------------------------------------------------
    def score_all(self, only_shown: bool = False) -> bool:
        """Score every item (or those the navigator shows) with the panel's model; False if it cannot start."""
        if self.score_batch is not None:
            self.window.tell("Scoring is already running.")
            return False
        if self.window.backend.path in (None, "", ":memory:"):
            self.window.error("Score all works on a database file; this window's database is in memory.")
            return False
        model_dir = self.model_dir()
        review = getattr(self.window, "model_review", None)
        if not (Path(model_dir) / "card.json").is_file() or review is None or review.model_error:
            self.window.error(f"No model in {model_dir}: choose one with Model → Choose the model directory….")
            return False
        if getattr(self.window.backend, "read_only", False):
            self.window.error("This window only reads its database: the scores could not be stored.")
            return False
        self.window.flush()
        items = self.window.navigator.visible_items() if only_shown else None
        from desktop.app.score_batch import ScoreBatch

        self._score_cancel = threading.Event()
        worker = review.worker
        what = f"the {count(len(items), 'item')} shown" if only_shown else "every item"
        dialog = QProgressDialog(f"Scoring {what} with the model in {model_dir}…", "Cancel", 0, STEPS,
                                 self.window)
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
        dialog.canceled.connect(worker.wake)
        self.score_progress = dialog
        worker.batchText.connect(self._score_text)
        worker.batchAdvanced.connect(self._score_pairs)
        worker.batchDone.connect(self._score_finished)
        worker.batchFailed.connect(self._score_failed)
        self._score_worker = worker
        # its lines and numbers are emitted in the model's thread, queued onto this one
        self.score_batch = ScoreBatch(items, self._score_cancel, text=worker.batchText.emit,
                                      advance=worker.batchAdvanced.emit)
        dialog.show()
        if review.model is None:
            dialog.setLabelText(f"Loading the model from {model_dir}…")
        worker.score_batch(self.score_batch)
        return True

    def stop_scoring(self) -> None:
        """Cancel a Score all run (the window closes): what is stored stays."""
        if self._score_cancel is not None:
            self._score_cancel.set()

    def _score_text(self, text: str) -> None:
        if self.score_progress is not None:
            self.score_progress.setLabelText(text)
        marks = self.window.navigator.model.marks
        if marks is not None and text.startswith("Scored and stored"):
            self.window.navigator.model.set_marks(marks)  # the rows on screen again, with their marks

    def _score_pairs(self, done: float, total: int) -> None:
        self._score_advanced(done, total, 0)

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
        self.window.tell("Model scores: " + run.summary())
        if self.window.navigator.model.marks is not None:
            self.window.navigator.model.set_marks(self.window.navigator.model.marks)
        review = getattr(self.window, "model_review", None)
        st = self.window.state
        if st is not None:
            st.question.predictions = self.window.backend.store.predictions(st.question.id)
            if review is not None:
                review.show(st, new_item=False, request=False)
        if self.window.want_facts:
            self.window.start_facts()

    def _score_failed(self, exc) -> None:
        self._score_closed()
        self.window.error(f"Scoring stopped: {exc}. What was scored before is kept; Score all again goes on.")

    def _score_closed(self) -> None:
        self.score_batch = None
        worker = self._score_worker
        if worker is not None:
            for signal, slot in ((worker.batchText, self._score_text), (worker.batchAdvanced, self._score_pairs),
                                 (worker.batchDone, self._score_finished), (worker.batchFailed, self._score_failed)):
                try:
                    signal.disconnect(slot)
                except (RuntimeError, TypeError):
                    pass
            self._score_worker = None
        if self.score_progress is not None:
            self.score_progress.canceled.disconnect(self._score_cancel.set)
            self.score_progress.close()
            self.score_progress = None
