"""Comments, answerability and the item's status.

The annotator's comments are a list: one row per comment, the box below edits the
chosen one (or a new one), and every edit stores the whole list as one `comments`
change, so adding, editing or deleting one comment never merges or loses the others.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView, QButtonGroup, QGroupBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton,
    QRadioButton, QVBoxLayout, QWidget,
)

from desktop.domain.changes import STATUSES
from desktop.domain.model import ANSWERABILITY
from desktop.domain.time_on_item import IDLE_LIMIT_S
from desktop.ui.kit import colors
from desktop.ui.item.text_field import DebouncedText
from desktop.ui.kit.steady import WrapLabel

_ANSWERABILITY_HELP = {
    "answerable": "the passage supports exactly the key",
    "unanswerable": "no alternative is supported by the passage (none of the above)",
    "unsure": "cannot decide yet",
}


class CommentsPanel(QWidget):
    """Emits fieldEdited("comments" | "answerability" | "status", value) and doneAndNext()."""

    fieldEdited = Signal(str, object)
    doneAndNext = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)

        box = QGroupBox("Answerability")
        row = QVBoxLayout(box)
        self.answerability = QButtonGroup(self)
        self.answerability.setExclusive(False)  # clicking the chosen one again clears it
        self._radios: dict[str, QRadioButton] = {}
        for value in ANSWERABILITY:
            radio = QRadioButton(value)
            radio.setToolTip(_ANSWERABILITY_HELP.get(value, ""))
            radio.setObjectName(f"answerability_{value}")
            self.answerability.addButton(radio)
            self._radios[value] = radio
            radio.clicked.connect(lambda checked, v=value: self._answerability_clicked(v, checked))
            row.addWidget(radio)
        layout.addWidget(box)

        status_box = QGroupBox("Status")
        srow = QHBoxLayout(status_box)
        self._status_buttons: dict[str, QPushButton] = {}
        for value in STATUSES:
            b = QPushButton(value)
            b.setCheckable(True)
            b.setToolTip(f"Set this item's status to “{value}” (your status, stored at once)")
            b.clicked.connect(lambda _c, v=value: self._emit("status", v))
            srow.addWidget(b)
            self._status_buttons[value] = b
        layout.addWidget(status_box)
        # time on item: derived from the history's timestamps, so it survives a restart
        self.time_on_item = QLabel()
        self.time_on_item.setObjectName("time_on_item")
        self.time_on_item.setAccessibleName("Time on item")
        limit = f"{IDLE_LIMIT_S / 60:g} minutes"
        self.time_on_item.setToolTip(f"The gaps between your consecutive edits of this item, each counted up to "
                                     f"{limit} (a longer pause counts as {limit}); reading before your first "
                                     "edit is not counted")
        layout.addWidget(self.time_on_item)
        done_next = QPushButton("Done → next unfinished (Ctrl+Enter)")
        done_next.setToolTip("Mark this item done and open the next item not done")
        done_next.clicked.connect(self.doneAndNext.emit)
        layout.addWidget(done_next)

        head = QHBoxLayout()
        self.heading = QLabel("Comments")
        head.addWidget(self.heading)
        head.addStretch(1)
        self.add_button = QPushButton("New comment")
        self.add_button.setToolTip("Start another comment; the others stay as they are")
        self.add_button.clicked.connect(self.new_comment)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the chosen comment")
        self.delete_button.clicked.connect(self.delete_comment)
        head.addWidget(self.add_button)
        head.addWidget(self.delete_button)
        layout.addLayout(head)
        self.others = WrapLabel()
        self.others.setWordWrap(True)
        self.others.setTextInteractionFlags(self.others.textInteractionFlags() | Qt.TextSelectableByMouse)
        t = colors.theme()
        self.others.setStyleSheet(f"QLabel {{ color: {t.base_text}; background: {t.base}; padding: 4px; }}")
        self.others.hide()
        layout.addWidget(self.others)
        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.setSelectionMode(QAbstractItemView.SingleSelection)
        self.list.setAlternatingRowColors(True)
        self.list.setMaximumHeight(150)
        self.list.setAccessibleName("Your comments")
        self.list.setToolTip("Your comments on this item; choose one to edit it below, Delete removes it")
        self.list.currentRowChanged.connect(self._row_chosen)
        QShortcut(QKeySequence.Delete, self.list, self.delete_comment, context=Qt.WidgetShortcut)
        layout.addWidget(self.list)
        self.editing_label = QLabel()
        self.editing_label.setStyleSheet(f"color: {t.muted};")
        layout.addWidget(self.editing_label)
        self.comment = DebouncedText(placeholder="A comment on this item (saved as you type)")
        self.comment.setAccessibleName("Comment")
        self.comment.setAccessibleDescription("The comment being edited; saved as you type")
        self.comment.committed.connect(self._committed)
        layout.addWidget(self.comment, 1)
        self._own: list[str] = []
        self._editing = 0  # index into the own comments; == len(own): a new comment
        self._loading = False

    def set_item(self, comments: list[str], answerability: str | None, status: str,
                 other_comments: list[str] = (), reset: bool = True) -> None:
        """`comments`: the annotator's own (editable); `other_comments`: imported ones, shown read-only.

        `reset`: another item — edit a new comment; else keep editing the same one."""
        self._loading = True
        try:
            self._own = list(comments)
            if reset or self._editing > len(self._own):
                self._editing = len(self._own)
            self._show_list()
            self._show_editor()
            self.others.setText("<b>Imported comments:</b><br>" + "<br>".join(html.escape(c) for c in other_comments))
            self.others.setVisible(bool(other_comments))
            for value, radio in self._radios.items():
                radio.setChecked(value == answerability)
            self.set_status(status)
        finally:
            self._loading = False

    # ---- the list of comments ---------------------------------------------------------------------
    def _show_list(self) -> None:
        self.list.blockSignals(True)
        try:
            self.list.clear()
            for i, text in enumerate(self._own):
                row = QListWidgetItem(f"{i + 1}. {text}")
                row.setToolTip(text)
                self.list.addItem(row)
            self.list.setCurrentRow(self._editing if self._editing < len(self._own) else -1)
        finally:
            self.list.blockSignals(False)
        self.list.setVisible(bool(self._own))
        self.delete_button.setEnabled(self._editing < len(self._own))
        n = len(self._own)
        self.heading.setText(f"Comments ({n})" if n else "Comments")

    def _show_editor(self) -> None:
        new = self._editing >= len(self._own)
        self.comment.set_text("" if new else self._own[self._editing])
        self.editing_label.setText("New comment:" if new else f"Comment {self._editing + 1}:")

    def _row_chosen(self, row: int) -> None:
        if row < 0 or row == self._editing:
            return
        self.comment.flush()  # the comment being typed goes in first (the list is redrawn)
        if row < len(self._own):
            self._editing = row
        self._redraw()

    def new_comment(self) -> None:
        self.comment.flush()
        self._editing = len(self._own)
        self._redraw()
        self.comment.setFocus()

    def _redraw(self) -> None:
        """Redraw the list and the editor without the redraw itself saving anything."""
        self._loading = True
        try:
            self._show_list()
            self._show_editor()
        finally:
            self._loading = False

    def delete_comment(self) -> None:
        self.comment.flush()
        if self._editing >= len(self._own):
            return
        comments = self._own[:self._editing] + self._own[self._editing + 1:]
        self._editing = len(comments)  # then a new comment: deleting never puts another in the box
        self._emit("comments", comments)

    def _committed(self, text: str) -> None:
        """The box's text, once typing pauses: it replaces the comment it edits (empty: deletes it)."""
        comments = list(self._own)
        if self._editing < len(comments):
            if text.strip():
                comments[self._editing] = text
            else:
                del comments[self._editing]
                self._editing = len(comments)
        elif text.strip():
            comments.append(text)
        else:
            return
        self._emit("comments", comments)

    def set_time_on_item(self, seconds: float) -> None:
        minutes, secs = divmod(int(round(seconds)), 60)
        text = f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"
        self.time_on_item.setText(f"Your time on this item: {text}")
        self.time_on_item.setAccessibleDescription(f"{seconds:.0f} seconds, from the timestamps of your edits")

    def set_status(self, status: str) -> None:
        for value, b in self._status_buttons.items():
            b.setChecked(value == status)

    def _answerability_clicked(self, value: str, checked: bool) -> None:
        for v, radio in self._radios.items():
            if v != value:
                radio.setChecked(False)
        self._emit("answerability", value if checked else None)

    def _emit(self, name: str, value) -> None:
        if not self._loading:
            self.fieldEdited.emit(name, value)

    def flush(self) -> None:
        self.comment.flush()
