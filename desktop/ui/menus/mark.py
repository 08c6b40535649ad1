"""The Mark menu and the mark bar above the passage: evidence, the basis of each
alternative, required paragraphs, removing and resizing the selected span.

The letter keys act in the passage view only (desktop/ui/item/passage_view.py), so typing
a comment never marks text.  `MarkMenu` is a part of the window (`window.mark_menu`), made
before the window's widgets: the mark bar is built into the window's centre, and the passage
view's signals are connected to it.  What it uses of the window: `passage`, `state`, `edit`
and the status bar.
"""
from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QToolButton

from desktop.domain.model import BASIS, EVIDENCE, REQUIRED, letter
from desktop.ui.kit import colors
from desktop.ui.kit.fit_text import ElidedLabel
from desktop.ui.menus.actions import menu_action
from desktop.ui.menus.mark_keys import basis_button_text, basis_key, basis_tooltip


class MarkMenu:
    def __init__(self, window):
        self.window = window

    def build(self) -> None:
        """The Mark menu, placed next in the menu bar."""
        action = partial(menu_action, self.window)
        mark = self.window.menuBar().addMenu("&Mark")
        self.menu = mark
        action(mark, "Evidence\tE", lambda: self.mark_button(EVIDENCE))
        self._basis_actions: list = []
        self._basis_menu_anchor = action(mark, "Required paragraphs\tP", lambda: self.mark_button(REQUIRED))
        self._basis_menu_rows(4)
        action(mark, "Remove the selected span\tDel", self._remove_selected)

    def build_bar(self) -> QHBoxLayout:
        """The row of mark buttons above the passage."""
        toolbar = QHBoxLayout()
        toolbar.setContentsMargins(0, 0, 0, 0)
        toolbar.addWidget(QLabel("Mark:"))
        t = colors.theme()
        ev = QPushButton("Evidence (E)")
        ev.setToolTip("Mark the selected passage words as evidence for the key (E)")
        ev.setStyleSheet(f"QPushButton {{ background: {t.evidence_bg}; color: {t.evidence_text}; padding: 3px 8px; }}")
        ev.clicked.connect(lambda: self.mark_button(EVIDENCE))
        req = QPushButton("Required ¶ (P)")
        req.setToolTip("Mark the paragraphs of the selection as required paragraphs")
        req.setStyleSheet(f"QPushButton {{ border-left: 6px solid {colors.REQUIRED_HEX}; padding: 3px 8px; }}")
        req.clicked.connect(lambda: self.mark_button(REQUIRED))
        self._basis_buttons = QHBoxLayout()
        self.remove_button = QPushButton("Remove (Del)")
        self.remove_button.setToolTip("Remove the selected span")
        self.remove_button.setEnabled(False)
        self.remove_button.clicked.connect(self._remove_selected)
        for b in (ev, req, self.remove_button):
            b.setFocusPolicy(Qt.NoFocus)
        toolbar.addWidget(ev)
        toolbar.addLayout(self._basis_buttons)
        toolbar.addWidget(req)
        # the selected span, in the room left before Remove: cut with "…" there, whole in its tooltip
        self.span_info = ElidedLabel()
        self.span_info.setStyleSheet(f"color: {t.muted};")
        self.span_info.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.span_info.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.span_info.setAccessibleName("Selected span")
        toolbar.addWidget(self.span_info, 1)
        toolbar.addWidget(self.remove_button)
        return toolbar

    def _basis_menu_rows(self, n: int) -> None:
        """The Mark menu's "Basis of A … E" entries, one per alternative of the item, with their keys."""
        if len(self._basis_actions) == n:
            return
        for a in self._basis_actions:
            self.menu.removeAction(a)
            a.deleteLater()
        self._basis_actions = []
        for i in range(n):
            a = QAction(f"Basis of {letter(i)}\t{basis_key(i)}", self.window)
            a.triggered.connect(lambda _=False, i=i: self.mark_button(BASIS, i))
            self.menu.insertAction(self._basis_menu_anchor, a)
            self._basis_actions.append(a)

    def basis_button_row(self, n: int) -> None:
        self._basis_menu_rows(n)
        if self._basis_buttons.count() == n:
            return
        while self._basis_buttons.count():
            w = self._basis_buttons.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        t = colors.theme()
        for i in range(n):
            b = QToolButton()
            b.setText(basis_button_text(i))
            b.setToolTip(basis_tooltip(i))
            b.setAccessibleName(f"Basis of alternative {letter(i)}")
            b.setAccessibleDescription(basis_tooltip(i))
            b.setStyleSheet(f"QToolButton {{ background: {t.alternative_fill(i)}; color: {t.on_alternative(i)};"
                            " font-weight: bold; border-radius: 3px; padding: 3px 6px; }")
            b.setFocusPolicy(Qt.NoFocus)
            b.clicked.connect(lambda _=False, i=i: self.mark_button(BASIS, i))
            self._basis_buttons.addWidget(b)

    # ================================================================ editing

    def mark(self, role: str, alternative: int, start: int, end: int) -> None:
        value: dict[str, Any] = {"role": role, "start": start, "end": end}
        if alternative >= 0:
            value["alternative"] = alternative
        self.window.edit("span.add", value)

    def mark_button(self, role: str, alternative: int | None = None) -> None:
        if not self.window.passage.mark(role, alternative):
            self.window.statusBar().showMessage("Select some text in the passage first.", 4000)
        self.window.passage.setFocus()

    def update_span(self, span_id: int, start: int, end: int) -> None:
        if self.window.edit("span.update", {"id": span_id, "start": start, "end": end}) is not None:
            self.window.passage.select_span(span_id)

    def _remove_selected(self) -> None:
        span = self.window.passage.selected_span()
        if span is not None and span.id is not None:
            self.window.edit("span.remove", {"id": span.id})

    def span_selected(self, span) -> None:
        self.remove_button.setEnabled(span is not None)
        if span is None or self.window.state is None:
            self.span_info.setText("")
            self.span_info.set_tip("")
            return
        what = {EVIDENCE: "evidence", REQUIRED: "required paragraphs"}.get(span.role, "")
        if span.role == BASIS and span.alternative is not None:
            what = f"basis of {letter(span.alternative)}"
        self.span_info.setText(f"selected: {what} [{span.start}–{span.end}] by {span.annotator}")
        self.span_info.set_tip("Shift+←/→ moves its end, Ctrl+Shift+←/→ its start; Delete removes it")

