"""Comments, answerability and the item's status."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup, QGroupBox, QHBoxLayout, QLabel, QPushButton, QRadioButton, QVBoxLayout, QWidget,
)

from desktop.domain.changes import STATUSES
from desktop.domain.model import ANSWERABILITY
from desktop.ui.text_field import DebouncedText

_ANSWERABILITY_HELP = {
    "answerable": "the passage supports exactly the key",
    "unanswerable": "no alternative is supported by the passage (none of the above)",
    "unsure": "cannot decide yet",
}


class CommentsPanel(QWidget):
    """Emits fieldEdited("comment" | "answerability" | "status", value) and doneAndNext()."""

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
            b.clicked.connect(lambda _c, v=value: self._emit("status", v))
            srow.addWidget(b)
            self._status_buttons[value] = b
        layout.addWidget(status_box)
        done_next = QPushButton("Done → next unfinished (Ctrl+Enter)")
        done_next.clicked.connect(self.doneAndNext.emit)
        layout.addWidget(done_next)

        layout.addWidget(QLabel("Comments"))
        self.others = QLabel()
        self.others.setWordWrap(True)
        self.others.setTextInteractionFlags(self.others.textInteractionFlags() | Qt.TextSelectableByMouse)
        self.others.setStyleSheet("QLabel { color: #444; background: #F4F4F4; padding: 4px; }")
        self.others.hide()
        layout.addWidget(self.others)
        self.comment = DebouncedText(placeholder="Comments on this item (saved as you type)")
        self.comment.committed.connect(lambda text: self._emit("comment", text))
        layout.addWidget(self.comment, 1)
        self._loading = False

    def set_item(self, comments: list[str], answerability: str | None, status: str,
                 other_comments: list[str] = ()) -> None:
        """`comments`: the annotator's own (editable); `other_comments`: imported ones, shown read-only."""
        self._loading = True
        try:
            self.comment.set_text("\n\n".join(comments))
            self.others.setText("<b>Imported comments:</b><br>" + "<br>".join(html.escape(c) for c in other_comments))
            self.others.setVisible(bool(other_comments))
            for value, radio in self._radios.items():
                radio.setChecked(value == answerability)
            self.set_status(status)
        finally:
            self._loading = False

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
