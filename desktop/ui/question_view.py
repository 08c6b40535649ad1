"""The stem and its alternatives A–D, the key marked, each alternative in its basis colour.

The alternatives double as the legend of the passage view: the swatch in front of
"B" is the colour of B's basis, and its button marks the selection as B's basis.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame, QGridLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget,
)

from desktop.domain.model import BASIS, Question, letter
from desktop.ui import colors


class QuestionView(QWidget):
    """Stem, alternatives with basis colours and counts, the key ticked, and a legend."""

    basisRequested = Signal(int)  # mark the passage selection as the basis of this alternative

    def __init__(self, parent=None):
        super().__init__(parent)
        # The content scrolls inside this widget, so a short pane never clips an alternative
        # (and the widget itself can sit in any splitter).
        shell = QVBoxLayout(self)
        shell.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        content = QWidget()
        scroll.setWidget(content)
        shell.addWidget(scroll)
        outer = QVBoxLayout(content)
        outer.setContentsMargins(6, 6, 6, 6)
        self.header = QLabel()
        self.header.setStyleSheet("color: #555;")
        self.stem = QLabel()
        self.stem.setWordWrap(True)
        self.stem.setTextInteractionFlags(Qt.TextSelectableByMouse)
        font = self.stem.font()
        font.setPointSizeF(font.pointSizeF() + 1.5)
        font.setBold(True)
        self.stem.setFont(font)
        outer.addWidget(self.header)
        outer.addWidget(self.stem)
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setContentsMargins(0, 4, 0, 4)
        self.grid.setHorizontalSpacing(8)
        self.grid.setVerticalSpacing(4)
        self.grid.setColumnStretch(1, 1)
        outer.addWidget(self.grid_host)
        legend = QLabel(
            "<span style='color:#555'>Legend:</span> "
            f"<span style='background:{colors.EVIDENCE_HEX}'>&nbsp;evidence&nbsp;</span> &nbsp; "
            "basis of an alternative: <b>its colour</b>, an underline in its own lane and its letter "
            "in the margin &nbsp; "
            f"<span style='color:{colors.REQUIRED_HEX}'>▌</span>required paragraphs &nbsp; "
            f"<span style='color:{colors.MODEL_HEX}'>┆model evidence┆</span>")
        legend.setWordWrap(True)
        legend.setTextFormat(Qt.RichText)
        outer.addWidget(legend)
        outer.addStretch(1)
        self._rows: list[tuple[QPushButton, QLabel]] = []
        self._text = ""
        self.question: Question | None = None

    def set_question(self, q: Question | None, passage_text: str = "") -> None:
        self.question = q
        self._text = passage_text
        if q is None:
            self.header.setText("")
            self.stem.setText("No item selected.")
            for button, label in self._rows:
                button.hide()
                label.hide()
            return
        self.header.setText(f"{q.source} · passage {q.passage_id} · question {q.index + 1} · id {q.id}")
        self.stem.setText(q.stem)
        # Rows are made once and reused: restyling widgets per item is what makes Qt slow.
        while len(self._rows) < len(q.alternatives):
            self._add_row(len(self._rows))
        for i, (button, label) in enumerate(self._rows):
            button.setVisible(i < len(q.alternatives))
            label.setVisible(i < len(q.alternatives))
        self.update_counts(q)

    def _add_row(self, i: int) -> None:
        hex_ = colors.alternative_hex(i)
        button = QPushButton(letter(i))
        button.setFixedWidth(34)
        button.setToolTip(f"Mark the selected text as the basis of {letter(i)} (key {i + 1} or {letter(i)})")
        button.setStyleSheet(f"QPushButton {{ background: {hex_}; color: white; font-weight: bold;"
                             " border-radius: 4px; padding: 3px; }")
        button.setFocusPolicy(Qt.NoFocus)
        button.clicked.connect(lambda _=False, i=i: self.basisRequested.emit(i))
        label = QLabel()
        label.setWordWrap(True)
        label.setTextFormat(Qt.RichText)
        label.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        label.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self.grid.addWidget(button, i, 0, Qt.AlignTop)
        self.grid.addWidget(label, i, 1, Qt.AlignTop)
        self._rows.append((button, label))

    def update_counts(self, q: Question) -> None:
        """Each alternative with its key mark and the start of its basis, in the basis colour."""
        for i, (_b, label) in enumerate(self._rows[: len(q.alternatives)]):
            text = html.escape(q.alternatives[i])
            if q.key == i:
                text = (f"<span style='background:#DDF2E0'><b>{text}</b></span> "
                        "&nbsp;<span style='color:#2E7D32'><b>✔ key</b></span>")
            elif q.key is not None:
                text = f"{text} <span style='color:#888'>(distractor)</span>"
            if i in q.unanswerable_alternatives:
                text += " <span style='color:#888'>(not enough information)</span>"
            bases = sorted(q.spans_with(BASIS, i), key=lambda s: s.start)
            hex_ = colors.alternative_hex(i)
            if bases:
                quotes = " · ".join(f"“{html.escape(_excerpt(self._text[s.start:s.end]))}”" for s in bases[:2])
                more = f" (+{len(bases) - 2})" if len(bases) > 2 else ""
                text += (f"<br><span style='color:{hex_}'>basis: <i>{quotes}</i>{more}</span>")
            else:
                text += "<br><span style='color:#999'>no basis marked</span>"
            label.setText(text)


def _excerpt(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"
