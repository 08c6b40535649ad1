"""`ModelReview`'s side of the model's queue: which items come next (the navigator's order and
filter after the open item), pausing, how far ahead to score, the model's state in the status
bar, the navigator's mark on items whose numbers are stored, and what arrives from each stage.

The settings are remembered (QSettings keys `score_ahead`, `model_paused`); without settings
(tests) `MCQLENS_SCORE_AHEAD` gives how many items ahead.  A part of `ModelReview`
(`model/review.py`); the queue itself is `model/queue_order.py`, the thread `scoring_worker.py`.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction, QActionGroup

from desktop.app import model_stages as stages
from desktop.ui.kit import workers
from desktop.ui.kit.fit_text import ElidedLabel
from desktop.app.model_queue import status_text

AHEAD_KEY = "score_ahead"
PAUSE_KEY = "model_paused"
AHEAD_ENV = "MCQLENS_SCORE_AHEAD"
AHEAD_DEFAULT = 5
AHEAD_CHOICES = (0, 3, 5, 10, 20)
BUSY_POLL_MS = 250  # how often the window's business (an import, a report, the facts) is looked at
# The items ahead are planned this long after a move, outside the move itself (the model starts
# on them only after scoring_worker.ITEM_SETTLE_S anyway); the open item is asked for at once.
PLAN_DELAY_MS = 60


def window_busy(window) -> bool:
    """The window is doing work of its own that the model should not slow down."""
    return bool(getattr(window, "importing", False)) or workers.running_tasks() > 0


class QueueControl:
    """Plan, pause, status: a part of `ModelReview` (`review.queue_control`).  What it uses of the
    review: `window`, `backend`, `worker`, `model` / `model_error`, `why`, `show`, `closed` /
    `stopped`, and `scored_items` / `queue_snapshot` (which it counts and keeps)."""

    def __init__(self, review) -> None:
        self.review = review
        s = self.review.window.settings
        env = os.environ.get(AHEAD_ENV)
        value = s.value(AHEAD_KEY, None) if s is not None else None
        try:
            self.ahead = max(0, int(value if value is not None else env if env else AHEAD_DEFAULT))
        except (TypeError, ValueError):
            self.ahead = AHEAD_DEFAULT
        self.paused = s is not None and str(s.value(PAUSE_KEY, "false")).lower() in ("true", "1")
        self.model_state = ElidedLabel("model: loading…")
        self.model_state.setAccessibleName("Model state")
        self.model_state.setToolTip("What the model is doing: the items ahead of this one whose numbers are "
                                    "ready, Score all's progress, or paused (Model → Pause the model)")
        self.review.window.statusBar().addPermanentWidget(self.model_state)
        self.scored = 0  # stages that arrived (tests, status)
        self._shown_seq = -1  # the newest snapshot shown (older ones arriving late are stale)
        self._plan_later = QTimer(self.review)  # the plan after a move: once the move is painted (and paging settles)
        self._plan_later.setSingleShot(True)
        self._plan_later.setInterval(PLAN_DELAY_MS)
        self._plan_later.timeout.connect(self.replan)
        self._busy = QTimer(self.review)
        self._busy.setInterval(BUSY_POLL_MS)
        self._busy.timeout.connect(self._check_busy)
        self._busy.start()
        self.review.window.navigator.model.modelReset.connect(self.replan_soon)  # a filter, a search or the order changed

    def add_menu(self, menu) -> None:
        w = self.review.window
        self.pause_action = QAction("&Pause the model", w)
        self.pause_action.setCheckable(True)
        self.pause_action.setChecked(self.paused)
        self.pause_action.setToolTip("Stop the model's work (the open item, the items ahead, Score all); "
                                     "remembered for the next session")
        self.pause_action.toggled.connect(self.set_paused)
        menu.addAction(self.pause_action)
        sub = menu.addMenu("Score a&head")
        group = QActionGroup(w)
        self.ahead_actions = {}
        for n in AHEAD_CHOICES:
            a = QAction("off" if n == 0 else f"{n} items", w)
            a.setCheckable(True)
            a.setChecked(n == self.ahead)
            a.triggered.connect(lambda _on=False, n=n: self.set_ahead(n))
            group.addAction(a)
            sub.addAction(a)
            self.ahead_actions[n] = a

    def worker_options(self) -> dict:
        """How the model's thread reaches the database: a connection of its own for a file, the
        window's (shared under its lock) for a database in memory."""
        backend = self.review.backend
        path, shared = backend.path, backend.store
        read_only = bool(getattr(backend, "read_only", False))

        def opener():
            if path not in (None, "", ":memory:") and os.path.exists(path):
                return backend.open_again(), True  # through the door the window came through
            return shared, False
        return {"store_opener": opener, "writable": not read_only}

    # ---- the plan --------------------------------------------------------------------------
    def plan_ahead(self) -> list[str]:
        """The next `ahead` items after the open one in the navigator's order and filter: read
        from the navigator's own list (its loaded rows; a page more when they run out), or,
        when a filter hides the open item, from the store's query at its place in the order."""
        nav = self.review.window.navigator
        current = self.review.window.current
        if self.ahead <= 0 or nav.nav is None or current is None or nav.model.query is None:
            return []
        m = nav.model
        try:
            i = m.row_index(nav.nav.rowid(current))
            if i is None:
                cursor = nav.nav.cursor_of(m.query, current)
                page = nav.nav.page(m.query, cursor, self.ahead) if cursor is not None else []
                rows = nav.nav.rows(nav.annotator, [r[0] for r in page])
                return [rows[r[0]].item_id for r in page if r[0] in rows]
            out, j = [], i + 1
            while len(out) < self.ahead:
                if j >= m.n_loaded():
                    if not m.canFetchMore():
                        break
                    m.fetchMore()
                    continue
                row = m.item_at(j)
                if row is not None:
                    out.append(row.item_id)
                j += 1
            return out
        except Exception:  # noqa: BLE001 - a closing database: nothing ahead
            return []

    def replan(self) -> None:
        if self.review.closed or self.review.window.current is None:
            return
        self._plan_later.stop()
        self.review.worker.set_ahead(self.plan_ahead())

    def replan_soon(self) -> None:
        """Plan once the window is done with what it is doing (a move, a filter change)."""
        if not self.review.closed:
            self._plan_later.start()

    def set_paused(self, paused: bool) -> None:
        self.paused = bool(paused)
        s = self.review.window.settings
        if s is not None:
            s.setValue(PAUSE_KEY, self.paused)
            s.sync()
        if self.pause_action.isChecked() != self.paused:
            self.pause_action.setChecked(self.paused)
        self.review.worker.set_paused(self.paused)
        st = self.review.window.state
        if st is not None:
            self.review.show(st, new_item=False)

    def set_ahead(self, n: int) -> None:
        self.ahead = max(0, int(n))
        s = self.review.window.settings
        if s is not None:
            s.setValue(AHEAD_KEY, self.ahead)
            s.sync()
        if self.ahead in getattr(self, "ahead_actions", {}):
            self.ahead_actions[self.ahead].setChecked(True)
        self.replan()

    def stop_timers(self) -> None:
        """The window closes: no more plans, no more looks at its business."""
        self._plan_later.stop()
        self._busy.stop()

    def _check_busy(self) -> None:
        if not self.review.closed:
            self.review.worker.set_hold(window_busy(self.review.window))

    # ---- what the queue says ---------------------------------------------------------------------
    def queue_changed(self, snap: dict) -> None:
        if self.review.closed:
            return
        seq = snap.get("seq", 0)
        if seq < self._shown_seq:
            return  # taken before one already shown: queued by the thread, delivered late
        self._shown_seq = seq
        self.review.queue_snapshot = snap
        self.show_state()

    def show_state(self) -> None:
        """The status bar's words for the newest snapshot (again once the model has loaded)."""
        snap = self.review.queue_snapshot
        text = status_text(snap, snap.get("batch"), loaded=self.review.model is not None, error=self.review.model_error)
        if text != self.model_state.text():
            self.model_state.setText(text)
            self.model_state.setAccessibleDescription(text)

    def stage_ready(self, item_id: str, stage: str, payload) -> None:
        if self.review.stopped or self.review.closed:  # queued before the window closed; its database may be closed already
            return
        self.scored += 1
        if stage == stages.GIVEAWAY:
            self.review.why.explained(item_id, payload)
            return
        if stage == stages.PROBABILITIES:
            self.review.scored_items += 1
        self._mark(item_id)
        st = self.review.window.state
        if st is None or self.review.window.current != item_id:
            return
        if not self.writable:
            self._show_unstored(item_id, payload)
            return
        st.question.predictions = self.review.backend.store.predictions(item_id)
        self.review.window.update_item_facts(item_id)
        self.review.show(st, new_item=False, request=False)

    def _show_unstored(self, item_id: str, preds) -> None:
        """A read-only window (a screenshot, a read-only folder): the scores are computed and
        shown, never stored."""
        st = self.review.window.state
        new = {(p.model_id, p.input_format) for p in preds}
        st.question.predictions = [p for p in st.question.predictions
                                   if (p.model_id, p.input_format) not in new] + list(preds)
        self.review.window.update_item_facts(item_id)
        self.review.show(st, new_item=False, request=False)

    def _mark(self, item_id: str) -> None:
        """The navigator's row of the item, drawn again with its mark."""
        nav = self.review.window.navigator
        if nav.nav is None:
            return
        rowid = nav.nav.rowid(item_id)
        if rowid is not None:
            nav.model.forget([rowid], [])

    def marks_for(self, model_id: str | None):
        store = self.review.backend.store

        def marks(rowids):
            return store.model_outputs.scored_rowids(rowids, model_id)
        return marks

    @property
    def writable(self) -> bool:
        return not getattr(self.review.backend, "read_only", False)
