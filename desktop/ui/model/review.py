"""`ModelReview`: the model panel joined to the window and to the model's thread.

It places the panel beside the question, adds the Model menu's review actions and the
navigator's order box, and on every item the window renders (`show`) puts the stored
scores in the panel or asks the `ScoringWorker` for them.  What comes back from the worker
(the model loaded, an item scored, what-if) is `review_worker.py` (mixed in); its parts are
`queue_control` (the items ahead, pause, the status bar's model state: `review_queue.py`),
`decisions` (the model's evidence accepted, edited or rejected: `review_evidence.py`) and
`why` (the Why? tab: `giveaway_view.py`).
Without a model the panel says why and the rest of the window works as before.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter

from desktop.domain.model import MODEL
from desktop.app import model_scoring as ms
from desktop.ui.kit.deferred import WhenShown
from desktop.ui.model.evidence_check import ACCEPT_KEY, EDIT_KEY, REJECT_KEY, AgreementTally
from desktop.ui.kit.fit_text import ElidingCombo
from desktop.ui.model.giveaway_view import GiveawayReview
from desktop.ui.model.panel import ModelPanel
from desktop.app.model_stages import EVIDENCE, PROBABILITIES
from desktop.ui.model.review_evidence import EvidenceDecisions
from desktop.ui.model.review_queue import QueueControl
from desktop.ui.model.review_worker import WorkerWiring
from inference.catalog import locate_model


class ModelReview(QObject, WorkerWiring):
    """Model panel + worker + menu, hooked into a `MainWindow`."""

    def __init__(self, window, model_dir: str | Path | None = None):
        super().__init__(window)
        self.window = window
        self.backend = window.backend
        self.model_dir = locate_model(model_dir)
        self.model = None
        self.model_error: str | None = None
        self.view: ms.ModelView | None = None
        self.tally = AgreementTally()
        self.scored_items = 0  # items whose probabilities this window's model computed (tests, status)
        self.closed = False
        self.tally_loaded = False
        self.stopped = False  # the window closed: results still queued are dropped
        self._whatif_gen = 0
        self.queue_snapshot: dict = {}
        self.panel = ModelPanel()
        self.panel.set_title(None)
        self.panel.set_status(f"loading the model from {self.model_dir}…")
        self.panel.suggest.clicked.connect(self.add_suggested_tag)
        self.decisions = EvidenceDecisions(self)  # the model's evidence accepted, edited or rejected
        self.panel.evidence.acceptRequested.connect(self.decisions.accept_evidence)
        self.panel.evidence.editRequested.connect(self.decisions.edit_evidence)
        self.panel.evidence.rejectRequested.connect(self.decisions.reject_evidence)
        self.panel.whatif.changed.connect(self._whatif_changed)
        self._whatif_reset = False
        self.whatif_later = WhenShown(self.panel.whatif)
        self._place()
        self.why = GiveawayReview(self)  # the Why? tab: the words that give the key away
        self.queue_control = QueueControl(self)  # the items ahead, pause, the status bar's model state
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
        # the window's Model menu (desktop/ui/menus/model.py: model directory, Score all…)
        part = getattr(w, "model_menu", None)
        menu = part.menu if part is not None else w.menuBar().addMenu("Mo&del")

        def action(text, slot, key=None):
            a = QAction(text, w)
            if key:
                a.setShortcut(QKeySequence(key))
                a.setShortcutContext(Qt.WindowShortcut)
            a.triggered.connect(slot)
            menu.addAction(a)
            return a

        action("&Accept model evidence", self.decisions.accept_evidence, ACCEPT_KEY)
        action("&Edit model evidence", self.decisions.edit_evidence, EDIT_KEY)
        action("&Reject model evidence", self.decisions.reject_evidence, REJECT_KEY)
        action("Add the suggested &tag (answerable without reading)", self.add_suggested_tag)
        menu.addSeparator()
        action("Rescore this &item", self.rescore)
        self.queue_control.add_menu(menu)

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

    # ---- the current item ----------------------------------------------------------------------
    def show(self, state, new_item: bool, request: bool = True) -> None:
        """Called by the window whenever it renders an item (new or refreshed): what is stored
        is shown at once; what is missing is asked of the model's thread, the open item first.
        Probabilities, N and MI come first; the evidence follows ("evidence…" meanwhile)."""
        q = state.question
        if new_item:
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
        left = self._left(view, state) if self.model is not None else []
        # the open item is the queue's first, also while the model loads (its stages are worked
        # out in the model's thread once it has loaded): never an item ahead before it
        if new_item or (self.model is not None and request and left):
            self.worker.request_item(q.id, q, state.passage_text)
        if new_item:
            self.queue_control.replan_soon()
        if self.model is None:
            pass  # the title and the status say loading, or why there is no model
        elif left and self.queue_control.paused:
            self.panel.set_status("The model is paused (Model → Pause the model).")
        elif PROBABILITIES in left:
            self.panel.set_status("scoring this item…")
        elif EVIDENCE in left:
            self.panel.set_status("evidence…")
        else:
            self.panel.set_status("")
        self.decisions.show_evidence(state, waiting=EVIDENCE in left and not self.queue_control.paused)
        self.why.show_item(state)

    def _left(self, view, state) -> list[str]:
        """The stages the item still lacks, from what the window shows of it."""
        fmts = [f for f in ms.FORMATS if f in self.model.card.formats]
        out = []
        if view is None or any(f not in view.formats for f in fmts):
            out.append(PROBABILITIES)
        if ms.STANDARD in fmts and state.passage_text and (out or view.evidence_pending):
            out.append(EVIDENCE)
        return out

    # ---- suggestion ------------------------------------------------------------------------------
    def add_suggested_tag(self) -> int | None:
        st = self.window.state
        if st is None or self.view is None or not self.view.answerable_without_reading:
            return None
        if any(p.type == ms.ANSWERABLE_WITHOUT_READING for p in st.question.problems):
            return None
        return self.window.edit("problem.add", {"type": ms.ANSWERABLE_WITHOUT_READING, "element": "question",
                                                "origin": MODEL})

    # ---- closing -------------------------------------------------------------------------------------
    def eventFilter(self, obj, event):
        if obj is self.window and event.type() == QEvent.Close:
            self.stopped = True
            self.closed = True  # scores still queued for delivery find the store closed: drop them
            self.queue_control.stop_timers()
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
