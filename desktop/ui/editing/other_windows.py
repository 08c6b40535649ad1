"""Living with other windows and programs on the same database.

Two windows (or a window and `mcqlens annotate`) may edit one item.  Nothing is
overwritten unseen: every edit carries what the window showed (`expect`), and a
refused one reloads the item and says who changed it, in a banner that does not
block the work (a modal box would stop the annotator for somebody else's edit).
A timer asks the store for its newest history id — one indexed query — and only
when it moved reads what changed, so an idle window costs next to nothing.
"""
from __future__ import annotations

import html
from datetime import datetime
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from desktop.domain.errors import McqLensError
from desktop.ui.kit.steady import WrapLabel

POLL_MS = 1000


def when(ts: str | None) -> str:
    """A history time stamp as people read it: local date and time to the second."""
    if not ts:
        return "an unknown time"
    try:  # stored in UTC; the annotator reads their own clock
        return datetime.fromisoformat(str(ts)).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return str(ts).replace("T", " ")[:19]


def describe(field: str, value: Any) -> str:
    """The now-current value of a field, short enough for one line."""
    if field in ("comment", "comments"):
        if not value:
            return "no comments"
        items = value if isinstance(value, list) else [value]
        return "; ".join(f"“{_short(t)}”" for t in items)
    if value is None:
        return "nothing (cleared)"
    if isinstance(value, dict):
        if "start" in value:
            return f"{value.get('role', 'span')} {value['start']}–{value['end']}"
        return str(value.get("type", value))
    return f"“{_short(str(value))}”"


def _short(text: str, n: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


class ConflictBanner(QFrame):
    """A warning strip above the passage: what happened, and one action (apply mine / try again)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("conflictBanner")
        from desktop.ui.kit import colors
        t = colors.theme()
        self.setStyleSheet(f"#conflictBanner {{ background: {t.banner_bg}; border: 1px solid #E0B040; border-radius: 3px; }}"
                           f"#conflictBanner QLabel {{ color: {t.banner_text}; }}")
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 3, 6, 3)
        self.label = WrapLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.RichText)
        row.addWidget(self.label, 1)
        self.action = QPushButton()
        self.action.setToolTip("Apply the refused edit again, on what is stored now")
        self.action.clicked.connect(self._act)
        row.addWidget(self.action)
        self.dismiss = QPushButton("Dismiss")
        self.dismiss.setToolTip("Hide this message")
        self.dismiss.clicked.connect(self.clear)
        row.addWidget(self.dismiss)
        self._then: Callable[[], Any] | None = None
        self.text = ""
        self.item: str | None = None  # the item whose refused edit the action would re-apply
        self.hide()

    def warn(self, text: str, action: str | None = None, then: Callable[[], Any] | None = None,
             item: str | None = None) -> None:
        self.text, self.item = text, item
        self.label.setText(f"<b>⚠</b> {html.escape(text)}")
        self._then = then
        self.action.setText(action or "")
        self.action.setVisible(bool(action and then))
        self.show()

    def clear(self) -> None:
        self.text, self.item = "", None
        self._then = None
        self.hide()

    def _act(self) -> None:
        then = self._then
        self.clear()
        if then is not None:
            then()


class ChangeWatcher(QObject):
    """Polls the store for edits made elsewhere and refreshes the window's rows and item."""

    def __init__(self, window, interval_ms: int = POLL_MS):
        super().__init__(window)
        self.window = window
        self.seen: int | None = None
        self.own: set[int] = set()  # history ids this window wrote: no news to it
        self.lock_shown = False
        self.waiting: list = []  # history rows of the current item not yet shown (typing in progress)
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def mark_own(self, history_id: int) -> None:
        self.own.add(history_id)

    def start_from_now(self) -> None:
        """Items were (re)loaded: what happened before is in them already."""
        try:
            self.seen = self.window.backend.last_change_id()
        except McqLensError:
            self.seen = None

    def tick(self) -> None:
        w = self.window
        if w.importing or w.current is None:
            return
        try:
            last = w.backend.last_change_id()
            if self.seen is None:
                self.seen = last
                return
            if last == self.seen:
                if self.waiting:
                    self._refresh_current()
                return
            rows = w.backend.changes_since(self.seen)
        except McqLensError as exc:  # a file gone or unreadable: say it once, keep the window
            if not self.lock_shown:
                self.lock_shown = True
                w.statusBar().showMessage(f"Cannot check for changes by other windows: {exc}", 15000)
            return
        self.lock_shown = False
        self.seen = max([last] + [r.id for r in rows])
        foreign = [r for r in rows if r.id not in self.own and r.item]
        self.own.difference_update(r.id for r in rows)
        if foreign:
            items = list(dict.fromkeys(r.item for r in foreign))
            w.editing.refresh_rows(items)
            self.waiting.extend(r for r in foreign if r.item == w.current)
        self._refresh_current()

    def _refresh_current(self) -> None:
        w = self.window
        news = [r for r in self.waiting if r.item == w.current]
        if not news:
            self.waiting.clear()
            return
        if w.editing.typing():
            # Text being typed is the annotator's: the item is redrawn once it is saved (a save
            # made on the old value meets the stale check and says so).
            return
        self.waiting.clear()
        try:
            if w.backend.version(w.current) == w.state.version:
                return  # already showing it (the window reloaded after a refused edit)
            w.refresh()
        except McqLensError as exc:
            w.statusBar().showMessage(str(exc), 15000)
            return
        who = ", ".join(sorted({r.annotator for r in news}))
        fields = ", ".join(dict.fromkeys(r.field for r in news))
        w.tell(f"{w.current} was changed by {who} in another window or program at {when(news[-1].ts)} "
               f"({fields}); showing what is stored now.")
