"""Adjudication of one item: the annotators' disagreements side by side, one row per field
and one column per annotator; adopt one version or edit a final one, stored as `gold`.

Every decision goes through `desktop.store.adjudication` (`adopt`, `adjudicate`), so
each gold edit is a change with its history row, listed at the bottom of the dialog.
"""
from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QPushButton, QSplitter,
    QTableWidget, QTableWidgetItem, QTextBrowser, QVBoxLayout, QWidget,
)

from desktop.domain.adjudication import is_span_field
from desktop.domain.agreement import GOLD
from desktop.domain.errors import McqLensError
from desktop.domain.words import count
from desktop.store import adjudication
from desktop.ui.kit import colors


def describe(fld: str, value: Any, text: str) -> str:
    """A version as an adjudicator reads it: the marked words for spans, one tag per line."""
    if value is None or value == [] or value == ():
        return "—"
    if is_span_field(fld):
        out = []
        for start, end in value:
            words = text[start:end] if text else ""
            if len(words) > 140:
                words = words[:70] + " … " + words[-60:]
            out.append(f"“{words}” [{start}–{end}]")
        return "\n".join(out)
    if fld == "problems":
        return "\n".join(f"{t[0]} @ {t[1]}" + (f" ({t[5]})" if len(t) > 5 and t[5] else "") for t in value)
    if fld == "comments":
        return "\n".join(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def context_html(text: str, chosen: list, gold: list | None, margin: int = 240) -> str:
    """The passage around a version of a span field: the chosen version on a yellow ground,
    gold underlined in green, so that the adjudicator reads the words in their sentence."""
    pairs = [tuple(p) for p in (chosen or [])] + [tuple(p) for p in (gold or [])]
    if not text or not pairs:
        return ""
    lo = max(0, min(p[0] for p in pairs) - margin)
    hi = min(len(text), max(p[1] for p in pairs) + margin)
    marks = [0] * (hi - lo)
    for bit, group in ((1, chosen or []), (2, gold or [])):
        for start, end in group:
            for i in range(max(start, lo), min(end, hi)):
                marks[i - lo] |= bit
    out, i = [], 0
    while i < len(marks):
        j = i
        while j < len(marks) and marks[j] == marks[i]:
            j += 1
        piece = _html(text[lo + i:lo + j]).replace("\n", "<br>")
        style = []
        t = colors.theme()
        if marks[i] & 1:
            style.append(f"background-color:{t.evidence_bg}; color:{t.evidence_text}")
        if marks[i] & 2:
            bg = t.evidence_bg if marks[i] & 1 else t.window
            style.append(f"text-decoration:underline; color:{colors.readable(t.ok, bg)}")
        out.append(f"<span style='{'; '.join(style)}'>{piece}</span>" if style else piece)
        i = j
    return ("… " if lo > 0 else "") + "".join(out) + (" …" if hi < len(text) else "")


def edit_text(fld: str, value: Any) -> str:
    """The JSON the editor shows for a version (what `adjudicate` takes back)."""
    if fld == "problems" and value:
        value = [{"type": t[0], "element": t[1], "note": t[5],
                  **{k: v for k, v in zip(("alternative", "start", "end"), t[2:5]) if v is not None}}
                 for t in value]
    return json.dumps(value, ensure_ascii=False)


class AdjudicationDialog(QDialog):
    """Disagreements of `item` in a table; Adopt or Save as gold write the `gold` layer."""

    adjudicated = Signal(str)  # the item, after every gold edit
    itemShown = Signal(str)  # the item, when the dialog moves to another (next / previous disagreement)

    def __init__(self, store, item: str, passage_text: str = "", parent=None):
        super().__init__(parent)
        self.store, self.item = store, item
        self.text = passage_text or store.passage(store.question(item).passage_id).text
        self.rows: list[dict] = []
        self.columns: list[str] = []
        self.queue: list[str] = []  # items to adjudicate one after another (Reports menu)
        self.setWindowTitle(f"Adjudicate — {item}")
        self.resize(1200, 720)

        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.table = QTableWidget()
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setSelectionBehavior(QAbstractItemView.SelectItems)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.currentCellChanged.connect(lambda *_: self._cell_chosen())

        self.context = QTextBrowser()
        self.context.setPlaceholderText("For spans: the chosen version in its passage (yellow), gold underlined.")
        self.editor = QPlainTextEdit()
        self.editor.setPlaceholderText("Choose a version above; edit it here (JSON) to make a final one.")
        self.editor.setMaximumHeight(90)
        self.adopt_button = QPushButton("Adopt this version as gold")
        self.adopt_button.clicked.connect(self.adopt_selected)
        self.save_button = QPushButton("Save the edited version as gold")
        self.save_button.clicked.connect(self.save_edited)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        # one disagreement after another (set_queue); hidden for a single item
        self.previous_button = QPushButton("◀ Previous disagreement")
        self.previous_button.clicked.connect(lambda: self.step(-1))
        self.next_button = QPushButton("Next disagreement ▶")
        self.next_button.clicked.connect(lambda: self.step(1))
        self.position = QLabel("")
        for w, name, what in ((self.previous_button, "Previous disagreement",
                               "Go to the previous item on which the annotators disagree"),
                              (self.next_button, "Next disagreement",
                               "Go to the next item on which the annotators disagree"),
                              (self.position, "Position", "Which of the items with disagreements this is"),
                              (close, "Close", "Close the adjudication")):
            w.setAccessibleName(name)
            w.setAccessibleDescription(what)
            w.setVisible(w is close)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.history = QLabel("")
        self.history.setWordWrap(True)
        self.history.setTextFormat(Qt.RichText)
        self.history.setStyleSheet(f"color: {colors.theme().muted};")

        buttons = QHBoxLayout()
        buttons.addWidget(self.adopt_button)
        buttons.addWidget(self.save_button)
        buttons.addStretch(1)
        buttons.addWidget(self.previous_button)
        buttons.addWidget(self.position)
        buttons.addWidget(self.next_button)
        buttons.addWidget(close)
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(QLabel("Final version (JSON: [start, end] pairs for spans):"))
        bl.addWidget(self.editor)
        bl.addLayout(buttons)
        bl.addWidget(self.message)
        bl.addWidget(self.history)
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.context)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.addWidget(self.heading)
        lay.addWidget(split, 1)
        self.reload()

    # ---- one item after another ---------------------------------------------------------
    def set_queue(self, items: list[str]) -> None:
        """Adjudicate `items` one after another (Previous / Next disagreement)."""
        self.queue = list(items)
        for w in (self.previous_button, self.next_button, self.position):
            w.setVisible(bool(self.queue))
        self._show_position()

    def show_item(self, item: str) -> None:
        if item == self.item:
            return
        self.item = item
        self.text = self.store.passage(self.store.question(item).passage_id).text
        self.setWindowTitle(f"Adjudicate — {item}")
        self.table.clearSelection()
        self.table.setCurrentCell(-1, -1)
        self.message.setText("")
        self.reload()
        self._show_position()
        self.itemShown.emit(item)

    def step(self, delta: int) -> str | None:
        """Move to the next (1) or previous (-1) item of the queue; returns it (None at an end)."""
        if not self.queue:
            return None
        i = self.queue.index(self.item) if self.item in self.queue else -1
        j = i + delta if i >= 0 else (0 if delta > 0 else len(self.queue) - 1)
        if not 0 <= j < len(self.queue):
            self.message.setText("This is the " + ("last" if delta > 0 else "first") + " item with disagreements.")
            return None
        self.show_item(self.queue[j])
        return self.item

    def _show_position(self) -> None:
        if not self.queue:
            return
        i = self.queue.index(self.item) if self.item in self.queue else -1
        self.position.setText(f"{i + 1} of {len(self.queue)}" if i >= 0 else count(len(self.queue), 'item'))
        self.previous_button.setEnabled(i != 0)
        self.next_button.setEnabled(i < len(self.queue) - 1)

    # ---- content ---------------------------------------------------------------------
    def reload(self) -> None:
        keep = self.selected()
        q = self.store.question(self.item)
        self.rows = adjudication.item_disagreements(self.store, self.item)
        raters = sorted({a for d in self.rows for a in d["values"] if a != GOLD})
        self.columns = raters + [GOLD]
        open_ = sum(not d["adjudicated"] for d in self.rows)
        self.heading.setText(
            f"<b>{self.item}</b> — {_html(q.stem)}<br>"
            + (f"{count(len(self.rows), 'field')} on which the annotators differ, {open_} not adjudicated yet."
               if self.rows else "The annotators agree on every field of this item: nothing to adjudicate."))
        self.table.blockSignals(True)
        self.table.clear()
        self.table.setRowCount(len(self.rows))
        self.table.setColumnCount(len(self.columns))
        self.table.setHorizontalHeaderLabels([c if c != GOLD else "gold (final)" for c in self.columns])
        self.table.setVerticalHeaderLabels([d["field"] for d in self.rows])
        for r, d in enumerate(self.rows):
            gold = d["values"].get(GOLD)
            for c, who in enumerate(self.columns):
                value = d["values"].get(who)
                cell = QTableWidgetItem(describe(d["field"], value, self.text))
                cell.setToolTip(f"{who}: {edit_text(d['field'], value)}")
                if who != GOLD and gold is not None:
                    t = colors.theme()
                    cell.setBackground(QColor(t.key_bg if value == gold else t.banner_bg))
                    cell.setForeground(QColor(t.text if value == gold else t.banner_text))
                if who == GOLD:
                    font = cell.font()
                    font.setBold(True)
                    cell.setFont(font)
                self.table.setItem(r, c, cell)
        self.table.blockSignals(False)
        self.table.resizeRowsToContents()
        if keep is not None:
            self.select(*keep)
        elif self.rows:
            self.select(self.rows[0]["field"], self.columns[0])
        self._show_history()

    def _show_history(self) -> None:
        rows = adjudication.gold_history(self.store, self.item)
        if not rows:
            self.history.setText("No gold edits on this item yet.")
            return
        lines = [f"#{h.id} {h.ts[:19]} {h.field}{' (undone)' if h.undone else ''}" for h in rows[-6:]]
        self.history.setText("Gold history: " + " · ".join(map(_html, lines)))

    # ---- choosing --------------------------------------------------------------------
    def fields(self) -> list[str]:
        return [d["field"] for d in self.rows]

    def value(self, fld: str, annotator: str) -> Any:
        return next(d for d in self.rows if d["field"] == fld)["values"].get(annotator)

    def select(self, fld: str, annotator: str) -> bool:
        if fld not in self.fields() or annotator not in self.columns:
            return False
        self.table.setCurrentCell(self.fields().index(fld), self.columns.index(annotator))
        self._cell_chosen()
        return True

    def selected(self) -> tuple[str, str] | None:
        r, c = self.table.currentRow(), self.table.currentColumn()
        if r < 0 or c < 0 or r >= len(self.rows) or c >= len(self.columns):
            return None
        return self.rows[r]["field"], self.columns[c]

    def _cell_chosen(self) -> None:
        sel = self.selected()
        if sel is None:
            return
        fld, who = sel
        self.editor.setPlainText(edit_text(fld, self.value(fld, who)))
        self.context.setHtml(context_html(self.text, self.value(fld, who), self.value(fld, GOLD))
                             if is_span_field(fld) else "")
        self.adopt_button.setEnabled(who != GOLD)
        self.adopt_button.setText(f"Adopt {who}'s version as gold" if who != GOLD else "Adopt this version as gold")

    # ---- deciding --------------------------------------------------------------------
    def adopt(self, fld: str, annotator: str) -> list[int]:
        ids = adjudication.adopt(self.store, self.item, fld, annotator)
        self._done(f"{fld}: {annotator}'s version is gold ({count(len(ids), 'change')} stored).", fld)
        return ids

    def adopt_selected(self) -> list[int]:
        sel = self.selected()
        if sel is None or sel[1] == GOLD:
            return []
        return self.adopt(*sel)

    def save_edited(self) -> list[int]:
        sel = self.selected()
        if sel is None:
            return []
        fld = sel[0]
        try:
            value = json.loads(self.editor.toPlainText() or "null")
            ids = adjudication.adjudicate(self.store, self.item, fld, _shape(fld, value))
        except (ValueError, TypeError) as exc:
            self.message.setText(f"<span style='color:{colors.theme().error}'>Not saved: {_html(str(exc))}</span>")
            return []
        except Exception as exc:  # the store's refusal (StoreError) is shown, not raised
            if not isinstance(exc, McqLensError):
                raise
            self.message.setText(f"<span style='color:{colors.theme().error}'>Not saved: {_html(str(exc))}</span>")
            return []
        self._done(f"{fld}: the edited version is gold ({count(len(ids), 'change')} stored).", fld)
        return ids

    def _done(self, text: str, fld: str) -> None:
        self.message.setText(f"<span style='color:{colors.theme().ok}'>✓ {_html(text)}</span>")
        self.reload()
        if fld in self.fields():
            self.select(fld, GOLD)
        self.adjudicated.emit(self.item)


def _shape(fld: str, value: Any) -> Any:
    """Check the edited JSON has the field's shape before it reaches the store."""
    if is_span_field(fld):
        if value is None:
            return []
        if not isinstance(value, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p) and p[0] < p[1]
                for p in value):
            raise ValueError("spans are a list of [start, end] pairs with start < end")
        return [tuple(p) for p in value]
    if fld == "problems":
        if not isinstance(value, list) or not all(isinstance(t, dict) and "type" in t and "element" in t
                                                  for t in value):
            raise ValueError("problems are a list of {\"type\", \"element\", ...}")
    if fld == "comments" and not (isinstance(value, list) and all(isinstance(t, str) for t in value)):
        raise ValueError("comments are a list of texts")
    return value


def _html(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
