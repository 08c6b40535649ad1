"""The model panel beside the alternatives, and `ModelReview`, which joins it to the window.

For the current item: a bar per alternative for the shortcut (Q+{O}) and the standard
(C+Q+{O}) model, the predicted option and N of each, MI, the model card's name; the
flags with a one-click suggestion; the evidence spot-check; what-if.  Scores come
from the database when cached, else from the `ScoringWorker` thread; the GUI thread
writes them into the store.  Without a model the panel says why and the rest of the
window works as before.
"""
from __future__ import annotations

import html
import os
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSplitter, QTabWidget,
    QVBoxLayout, QWidget,
)

from desktop.domain.errors import McqLensError
from desktop.domain.model import EVIDENCE, MODEL, MODEL_ACCEPTED, Span, letter
from desktop.ui import colors
from desktop.ui import model_scoring as ms
from desktop.ui.deferred import WhenShown
from desktop.ui.evidence_check import ACCEPT_KEY, EDIT_KEY, REJECT_KEY, AgreementTally, EvidenceCheck
from desktop.ui.giveaway_view import GiveawayReview
from desktop.ui.probability_bars import ProbabilityBars, Series
from desktop.ui.scoring_worker import ScoringWorker
from desktop.ui.whatif import WhatIfBox
from desktop.ui.steady import WrapLabel
from desktop.ui.fit_text import ElidingCombo

def format_hex(fmt: str) -> str:
    """The bars' colour of an input format, in the theme (3:1 against their track)."""
    t = colors.theme()
    return t.bar_shortcut if fmt == ms.SHORTCUT else t.bar_standard


class ModelPanel(QWidget):
    """What the model says about the current item; emits nothing itself but its child widgets' requests."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        self.title = WrapLabel("<b>Model</b>")
        self.title.setTextFormat(Qt.RichText)
        self.title.setWordWrap(True)
        lay.addWidget(self.title)
        self.status = WrapLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.RichText)
        self.status.setStyleSheet(f"color: {colors.theme().muted};")
        lay.addWidget(self.status)
        self.bars = ProbabilityBars()
        lay.addWidget(self.bars)
        self.metrics = WrapLabel()
        self.metrics.setWordWrap(True)
        self.metrics.setTextFormat(Qt.RichText)
        self.metrics.setToolTip("N: effective number of options (1 = sure … number of alternatives = lost); "
                                "MI: how much the passage helps, in bits (negative: the passage made the model "
                                "less sure). Guide: Shift+F1, or Help → Annotation guide (guide#model)")
        lay.addWidget(self.metrics)
        flag_row = QHBoxLayout()
        self.flags = WrapLabel()
        self.flags.setWordWrap(True)
        self.flags.setTextFormat(Qt.RichText)
        flag_row.addWidget(self.flags, 1)
        self.suggest = QPushButton("Tag “Answerable without reading”")
        self.suggest.setToolTip("The shortcut model, without the passage, is sure of the key. "
                                "Add the typology tag (severe, question) if you agree.")
        self.suggest.setFocusPolicy(Qt.NoFocus)
        self.suggest.setAccessibleName("Tag answerable without reading")
        self.suggest.hide()
        flag_row.addWidget(self.suggest)
        lay.addLayout(flag_row)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Model review")
        self.tabs.setAccessibleDescription("The model's evidence to accept, edit or reject, and what-if edits")
        self.evidence = EvidenceCheck()
        self.whatif = WhatIfBox()
        self.tabs.addTab(self.evidence, "Evidence spot-check")
        self.tabs.addTab(self.whatif, "What if…")
        lay.addWidget(self.tabs)
        lay.addStretch(1)
        self.view: ms.ModelView | None = None

    def set_title(self, name: str | None, detail: str = "") -> None:
        text = f"<b>Model</b> · {html.escape(name)}" if name else "<b>Model</b>"
        if detail:
            text += f" <span style='color:{colors.theme().muted}'>({html.escape(detail)})</span>"
        self.title.setText(text)

    def set_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def show_view(self, view: ms.ModelView | None, n_alternatives: int, key: int | None,
                  suggest: bool = False) -> None:
        self.view = view
        if view is None:
            self.bars.set_data(n_alternatives, key, [])
            self.bars.hide()
            self.metrics.setText("")
            self.flags.setText("")
            self.suggest.hide()
            return
        self.bars.show()
        series = [Series(ms.NOTATION[f], format_hex(f), view.formats[f].probabilities, view.formats[f].predicted)
                  for f in ms.FORMATS if f in view.formats]
        self.bars.set_data(n_alternatives, key, series)
        parts = []
        for f in ms.FORMATS:
            fv = view.formats.get(f)
            if fv is not None:
                parts.append(f"{ms.NOTATION[f]}: predicts <b>{letter(fv.predicted)}</b>, N = <b>{fv.n_eff:.2f}</b>")
        if view.mi_bits is not None:
            parts.append(f"MI = <b>{view.mi_bits:.2f}</b> bits")
        self.metrics.setText(" · ".join(parts))
        flags = []
        if view.answerable_without_reading:
            flags.append(f"<span style='color:{colors.theme().error}'>⚑ <b>answerable without reading?</b></span> "
                         f"shortcut N ≤ {ms.SHORTCUT_N_MAX:g} and it picks the key")
        if view.context_barely_helps:
            flags.append(f"<span style='color:{colors.theme().warn}'>⚑ <b>context barely helps</b></span> "
                         f"MI ≤ {ms.LOW_MI_BITS:g} bits")
        self.flags.setText("<br>".join(flags))
        self.suggest.setVisible(suggest)


class ModelReview(QObject):
    """Model panel + worker + menu, hooked into a `MainWindow`."""

    def __init__(self, window, model_dir: str | Path | None = None):
        super().__init__(window)
        self.window = window
        self.backend = window.backend
        self.model_dir = Path(model_dir) if model_dir else ms.default_model_dir()
        self.model = None
        self.model_error: str | None = None
        self.view: ms.ModelView | None = None
        self.tally = AgreementTally()
        self.scored_items = 0  # items scored and stored by this window (tests, status)
        self.closed = False
        self.tally_loaded = False
        self.stopped = False  # the window closed: results still queued are dropped
        self._whatif_gen = 0
        self._pending: str | None = None  # item whose scores are being computed
        self.panel = ModelPanel()
        self.panel.set_title(None)
        self.panel.set_status(f"loading the model from {self.model_dir}…")
        self.panel.suggest.clicked.connect(self.add_suggested_tag)
        self.panel.evidence.acceptRequested.connect(self.accept_evidence)
        self.panel.evidence.editRequested.connect(self.edit_evidence)
        self.panel.evidence.rejectRequested.connect(self.reject_evidence)
        self.panel.whatif.changed.connect(self._whatif_changed)
        self._whatif_reset = False
        self.whatif_later = WhenShown(self.panel.whatif)
        self._place()
        self.why = GiveawayReview(self)  # the Why? tab: the words that give the key away
        self._menu()
        self._order_box()
        self._start_worker()
        window.installEventFilter(self)

    # ---- placing ---------------------------------------------------------------------------------
    def _place(self) -> None:
        qv = self.window.question_view
        outer = qv.parentWidget()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the panel wraps to the width given
        scroll.setWidget(self.panel)
        scroll.setMinimumWidth(300)
        self.scroll = scroll
        if isinstance(outer, QSplitter):
            index = outer.indexOf(qv)
            row = QSplitter(Qt.Horizontal)
            outer.insertWidget(index, row)
            row.addWidget(qv)
            row.addWidget(scroll)
            row.setStretchFactor(0, 1)
            row.setSizes([430, 390])
            outer.setSizes([520, 420])
            self.row = row
        else:  # a layout the panel does not know: a tab beside the others
            self.window.tabs.addTab(scroll, "Model")

    def _menu(self) -> None:
        w = self.window
        # the window's Model menu (desktop/ui/menu_model.py: model directory, Score all…)
        menu = getattr(w, "model_menu", None) or w.menuBar().addMenu("Mo&del")

        def action(text, slot, key=None):
            a = QAction(text, w)
            if key:
                a.setShortcut(QKeySequence(key))
                a.setShortcutContext(Qt.WindowShortcut)
            a.triggered.connect(slot)
            menu.addAction(a)
            return a

        action("&Accept model evidence", self.accept_evidence, ACCEPT_KEY)
        action("&Edit model evidence", self.edit_evidence, EDIT_KEY)
        action("&Reject model evidence", self.reject_evidence, REJECT_KEY)
        action("Add the suggested &tag (answerable without reading)", self.add_suggested_tag)
        menu.addSeparator()
        action("Rescore this &item", self.rescore)

    def _order_box(self) -> None:
        """Navigator order: import order, or by shortcut N / MI (lowest first: the items to look at)."""
        nav = self.window.navigator
        box = ElidingCombo()
        box.addItems(["order: as imported", "order: shortcut N ↑", "order: MI ↑"])
        box.setAccessibleName("Order of the items")
        box.setToolTip("Sort the items (within and across passages) by the model's numbers; "
                       "unscored items go last. Filter by flag with the “model” filter.")
        box.setAccessibleName("Item order")
        box.setAccessibleDescription("List the items as imported, or by the shortcut model's N or by MI, lowest first")
        box.currentIndexChanged.connect(self._order_changed)
        layout = nav.layout()
        layout.insertWidget(max(0, layout.count() - 2), box)
        self.order = box

    def _order_changed(self, index: int) -> None:
        """Re-order the navigator (a query in the store): a passage goes where its lowest item goes."""
        self.window.navigator.set_order({1: "shortcut_n", 2: "mi_bits"}.get(index, "import"))

    # ---- the model -------------------------------------------------------------------------------
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
        self.worker = ScoringWorker(self.model_dir)
        self.worker.modelReady.connect(self._model_ready)
        self.worker.modelFailed.connect(self._model_failed)
        self.worker.itemScored.connect(self._item_scored)
        self.worker.itemFailed.connect(self._item_failed)
        self.worker.whatifScored.connect(self._whatif_scored)
        self.worker.jobDone.connect(self._job_done)
        self.worker.start()

    def _model_ready(self, model) -> None:
        self.model = model
        self.model_error = None
        runner = model.runner
        device = "GPU" if getattr(runner, "on_gpu", False) else "CPU"
        self.panel.set_title(model.card.name, f"{device}, {getattr(runner, 'precision', '')} graph".strip(", "))
        self.panel.title.setToolTip(f"{model.directory}\n{model.message}")
        self.panel.set_status("")
        st = self.window.state
        if st is not None:
            self.show(st, new_item=False, request=True)
        self._start_tally()

    def _read_datasets(self):
        """A function for the worker: every dataset with this annotator's annotations, read
        through a connection of its own when the database is a file (Score whole database)."""
        from desktop.store import Store
        path, shared, me = self.backend.path, self.backend.store, self.backend.annotator

        def read():
            own = path not in (None, "", ":memory:") and os.path.exists(path)
            store = Store.open(path, read_only=True) if own else shared
            try:
                return store.load_datasets(annotator=me)
            finally:
                if own:
                    store.close()
        return read

    def _read_evidence_items(self):
        """A function for the worker: the items with model evidence (the only ones the tally
        counts), with this annotator's annotations and their passages, read through a connection
        of its own when the database is a file; never the whole bank."""
        from desktop.domain.model import Dataset, Passage
        from desktop.store import Store
        path, shared, me = self.backend.path, self.backend.store, self.backend.annotator

        def read():
            own = path not in (None, "", ":memory:") and os.path.exists(path)
            store = Store.open(path, create=False) if own else shared
            try:
                passages: dict[str, Passage] = {}
                ids = store.predicted_items(with_evidence=True)
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
        self.panel.set_title(None)
        self.panel.set_status(
            f"<b>No model:</b> {html.escape(message)}.<br>Put a model directory at <code>models/default/</code> "
            "(mcqlens train) or start with <code>mcqlens gui --model DIR</code>. Everything else works without it"
            + ("; predictions already stored are shown below." if self.view else "."))
        for b in (self.panel.whatif.nota, self.panel.whatif.text):
            b.setEnabled(False)
        self.why.show_item(self.window.state)

    # ---- the current item ----------------------------------------------------------------------
    def show(self, state, new_item: bool, request: bool = True) -> None:
        """Called by the window whenever it renders an item (new or refreshed)."""
        q = state.question
        if new_item:
            self.worker.cancel_item()
            self._pending = None
            self._whatif_reset = True
        model_id = self.model.id if self.model is not None else None
        view = ms.view_of(q, model_id=model_id)
        if view is None and model_id is None:
            view = ms.view_of(q)
        self.view = view
        if self.model is None:
            self.panel.set_title(view.model_name if view else None, "stored scores" if view else "")
        has_tag = any(p.type == ms.ANSWERABLE_WITHOUT_READING for p in q.problems)
        self.panel.show_view(view, len(q.alternatives), q.key,
                             suggest=view is not None and view.answerable_without_reading and not has_tag)
        probs = view.shortcut.probabilities if view is not None and view.shortcut is not None else None
        self.whatif_later.update("item", lambda: self._show_whatif(q, probs))  # when its tab is in front
        complete = view is not None and all(f in view.formats for f in ms.FORMATS
                                            if self.model is not None and f in self.model.card.formats)
        if self.model is not None and not complete and request:
            self.panel.set_status("scoring this item…")
            self._pending = q.id
            self.worker.request_item(q.id, q, state.passage_text)
        elif self.model is not None:
            self.panel.set_status("")
        self._show_evidence(state)
        self.why.show_item(state)

    def _show_whatif(self, q, probs) -> None:
        if self._whatif_reset:  # a new item: the scratch copy starts again from its alternatives
            self._whatif_reset = False
            self.panel.whatif.set_item(q.alternatives, q.key, None)
        if probs is not None:
            self.panel.whatif.set_original_probs(probs)

    def _evidence_state(self, state) -> str:
        v = self.view
        if v is None or v.evidence is None:
            return ""
        start, end, _ = v.evidence
        evidence = [s for s in state.question.spans if s.role == EVIDENCE and s.origin != MODEL]
        if any((s.start, s.end) == (start, end) for s in evidence):
            return "accepted"
        if self.backend.annotator in v.evidence_rejected_by:
            return "rejected"
        # the annotator's own evidence over the model's sentence: edited (or found alike)
        if any(s.annotator == self.backend.annotator and s.start < end and start < s.end for s in evidence):
            return "edited"
        return ""

    def _show_evidence(self, state) -> None:
        q = state.question
        v = self.view
        decision = self._evidence_state(state)
        spans = list(q.spans)
        if v is not None and v.evidence is not None and not decision:
            start, end, _ = v.evidence
            spans.append(Span(start, end, EVIDENCE, annotator=v.model_id, origin=MODEL))
        self.window.passage.set_spans(spans)
        self.panel.evidence.set_evidence(v.evidence[2] if v is not None and v.evidence else None, decision)
        me = self.backend.annotator
        mine = [s.text(state.passage_text) for s in q.spans
                if s.role == EVIDENCE and s.annotator == me and s.origin != MODEL]
        if v is not None and v.evidence is not None:
            self.tally.record(q.id, ms.evidence_agreement(v.evidence[2], mine))
        self.panel.evidence.set_tally(self.tally.summary())

    def settle(self, timeout: float = 20.0) -> bool:
        """Wait (processing events) until the model is loaded and the current item scored.

        For `mcqlens gui --screenshot`, which renders once; the interactive window never waits.
        """
        import time

        from PySide6.QtWidgets import QApplication
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            QApplication.processEvents()
            if self.model_error or (self.model is not None and self._pending is None):
                return True
            time.sleep(0.01)
        return False

    def _item_scored(self, item_id: str, preds) -> None:
        if self.stopped or self.closed:  # queued before the window closed; its database may be closed already
            return
        if item_id == self._pending:
            self._pending = None
        if getattr(self.backend, "read_only", False):
            self._show_unstored(item_id, preds)
            return
        try:
            self.backend.store.add_predictions([(item_id, p) for p in preds])
        except McqLensError as exc:
            self.panel.set_status(f"could not store the scores: {html.escape(str(exc))}")
            return
        self.scored_items += 1
        self._update_facts(item_id)
        st = self.window.state
        if st is not None and self.window.current == item_id:
            st.question.predictions = self.backend.store.predictions(item_id)
            self.show(st, new_item=False, request=False)

    def _show_unstored(self, item_id: str, preds) -> None:
        """A read-only window (a screenshot, a read-only folder): the scores are computed and
        shown, never stored."""
        self.scored_items += 1
        st = self.window.state
        if st is not None and self.window.current == item_id:
            new = {(p.model_id, p.input_format) for p in preds}
            st.question.predictions = [p for p in st.question.predictions
                                       if (p.model_id, p.input_format) not in new] + list(preds)
            self.show(st, new_item=False, request=False)

    def _item_failed(self, item_id: str, message: str) -> None:
        if item_id == self._pending:
            self._pending = None
        if self.window.current == item_id:
            self.panel.set_status(f"<span style='color:{colors.theme().error}'>{html.escape(message)}</span>")

    def _update_facts(self, item_id: str) -> None:
        if self.window.state is None or self.window.current != item_id:
            return
        self.window.state.question.predictions = self.backend.store.predictions(item_id)
        self.window.update_item_facts(item_id)

    def rescore(self) -> None:
        st = self.window.state
        if st is not None and self.model is not None:
            self.panel.set_status("scoring this item…")
            self.worker.request_item(st.question.id, st.question, st.passage_text)

    # ---- suggestion ------------------------------------------------------------------------------
    def add_suggested_tag(self) -> int | None:
        st = self.window.state
        if st is None or self.view is None or not self.view.answerable_without_reading:
            return None
        if any(p.type == ms.ANSWERABLE_WITHOUT_READING for p in st.question.problems):
            return None
        return self.window.edit("problem.add", {"type": ms.ANSWERABLE_WITHOUT_READING, "element": "question",
                                                "origin": MODEL})

    # ---- evidence --------------------------------------------------------------------------------
    def _pending_evidence(self):
        st = self.window.state
        if st is None or self.view is None or self.view.evidence is None or self._evidence_state(st):
            return None
        return self.view.evidence

    def accept_evidence(self) -> int | None:
        ev = self._pending_evidence()
        if ev is None:
            return None
        item = self.window.current
        hid = self.window.edit("span.add", {"role": EVIDENCE, "start": ev[0], "end": ev[1],
                                            "origin": MODEL_ACCEPTED})
        if hid is not None:
            self.tally.decide(item, "accepted")
            self.panel.evidence.set_tally(self.tally.summary())
        return hid

    def edit_evidence(self) -> None:
        ev = self._pending_evidence()
        if ev is None:
            return
        self.tally.decide(self.window.current, "edited")
        self.window.passage.set_selection(ev[0], ev[1])
        self.window.passage.setFocus()
        self.window.statusBar().showMessage("The model's sentence is selected: adjust it, then press E.", 8000)

    def reject_evidence(self) -> None:
        ev = self._pending_evidence()
        if ev is None:
            return
        item = self.window.current
        std = next((p for p in self.backend.store.predictions(item, self.view.model_id)
                    if p.input_format == ms.STANDARD), None)
        if std is None:
            return
        try:
            self.backend.store.add_predictions([(item, ms.rejection(std, self.backend.annotator))])
        except McqLensError as exc:
            self.window.statusBar().showMessage(f"Not saved: {exc}", 8000)
            return
        self.tally.decide(item, "rejected")
        st = self.window.state
        st.question.predictions = self.backend.store.predictions(item)
        self.show(st, new_item=False, request=False)

    # ---- what-if -------------------------------------------------------------------------------
    def _whatif_changed(self, alternatives, nota_index: int) -> None:
        st = self.window.state
        if st is None or self.model is None:
            return
        self._whatif_gen = self.worker.request_whatif(st.question, alternatives,
                                                      None if nota_index < 0 else nota_index)

    def _whatif_scored(self, gen: int, result) -> None:
        if gen == self._whatif_gen:
            self.panel.whatif.show_scratch(result.probabilities)

    # ---- closing -------------------------------------------------------------------------------------
    def eventFilter(self, obj, event):
        if obj is self.window and event.type() == QEvent.Close:
            self.stopped = True
            self.closed = True  # scores still queued for delivery find the store closed: drop them
            self.worker.stop()
        return False

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop the model's thread; wait `timeout` seconds for it (None: until it has ended)."""
        self.worker.stop(timeout)


def install(window, model_dir: str | Path | None = None) -> ModelReview | None:
    """Hook the model panel into the window; a failure here never stops the window from opening."""
    try:
        return ModelReview(window, model_dir)
    except Exception as exc:  # noqa: BLE001 - the workbench must open without model review
        window.statusBar().showMessage(f"Model panel unavailable: {exc}", 15000)
        return None
