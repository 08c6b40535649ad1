"""What-if: edit an alternative, or put "None of the answers are correct." in its place, in a scratch copy.

The box never writes anything: it emits the scratch alternatives, the panel asks the
worker for the shortcut probabilities of that copy and shows them beside the stored
item's.  Reset brings the copy back to the stored alternatives.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
)

from desktop.domain.model import letter
from desktop.ui.kit import colors
from desktop.app.model_scoring import NOTA_TEXT
from desktop.ui.model.probability_bars import ProbabilityBars, Series
from desktop.ui.kit.steady import WrapLabel
from desktop.ui.kit.fit_text import ElidingCombo



class WhatIfBox(QGroupBox):
    # scratch alternatives, index of the NOTA alternative (or -1)
    changed = Signal(object, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFlat(True)
        lay = QVBoxLayout(self)
        hint = WrapLabel("Edit an alternative in a scratch copy, or put NOTA in its place: the shortcut (Q+{O}) "
                      "probabilities follow as you type. The stored item is not changed.")
        hint.setWordWrap(True)
        hint.setStyleSheet(f"color: {colors.theme().muted};")
        lay.addWidget(hint)
        row = QHBoxLayout()
        self.which = ElidingCombo()
        self.which.setToolTip("The alternative to change in the scratch copy")
        self.which.setAccessibleName("What if: alternative")
        self.which.currentIndexChanged.connect(self._show_text)
        self.text = QLineEdit()
        self.text.setPlaceholderText("alternative text")
        self.text.setAccessibleName("What if: alternative text")
        self.text.setToolTip("Edit the alternative in the scratch copy; the stored item is not changed")
        self.text.textEdited.connect(self._edited)
        self.nota = QPushButton("NOTA")
        self.nota.setToolTip(f"Put “{NOTA_TEXT}” in place of this alternative")
        self.nota.clicked.connect(self.put_nota)
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Bring the scratch copy back to the stored alternatives")
        self.reset_button.clicked.connect(self.reset)
        row.addWidget(self.which)
        row.addWidget(self.text, 1)
        row.addWidget(self.nota)
        row.addWidget(self.reset_button)
        lay.addLayout(row)
        self.bars = ProbabilityBars()
        lay.addWidget(self.bars)
        self.note = WrapLabel()
        self.note.setStyleSheet(f"color: {colors.theme().muted};")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        self.original: list[str] = []
        self.scratch: list[str] = []
        self.nota_index: int | None = None
        self.key: int | None = None
        self.original_probs: list[float] = []
        self.scratch_probs: list[float] = []

    def set_item(self, alternatives: list[str], key: int | None, shortcut_probs: list[float] | None) -> None:
        self.original = list(alternatives)
        self.key = key
        self.original_probs = list(shortcut_probs or [])
        self.which.blockSignals(True)
        self.which.clear()
        self.which.addItems([letter(i) for i in range(len(alternatives))])
        self.which.blockSignals(False)
        self.reset()

    def set_original_probs(self, probs: list[float] | None) -> None:
        self.original_probs = list(probs or [])
        if not self.edited():
            self.scratch_probs = list(self.original_probs)
        self._draw()

    def edited(self) -> bool:
        return self.scratch != self.original

    def reset(self) -> None:
        self.scratch = list(self.original)
        self.nota_index = None
        self.scratch_probs = list(self.original_probs)
        self._show_text()
        self._draw()

    def _show_text(self) -> None:
        i = self.which.currentIndex()
        self.text.setText(self.scratch[i] if 0 <= i < len(self.scratch) else "")

    def _edited(self, text: str) -> None:
        i = self.which.currentIndex()
        if not 0 <= i < len(self.scratch):
            return
        self.scratch[i] = text
        if self.nota_index == i and text != NOTA_TEXT:
            self.nota_index = None
        self._emit()

    def put_nota(self) -> None:
        i = self.which.currentIndex()
        if not 0 <= i < len(self.scratch):
            return
        self.scratch[i] = NOTA_TEXT
        self.nota_index = i
        self.text.setText(NOTA_TEXT)
        self._emit()

    def set_alternative(self, index: int, text: str) -> None:
        """Programmatic edit (tests, benchmarks): as if typed into the box."""
        self.which.setCurrentIndex(index)
        self.text.setText(text)
        self._edited(text)

    def _emit(self) -> None:
        self.note.setText("scoring the scratch copy…")
        self.changed.emit(list(self.scratch), -1 if self.nota_index is None else self.nota_index)

    def show_scratch(self, probs: list[float]) -> None:
        self.scratch_probs = list(probs)
        changed = [letter(i) for i, (a, b) in enumerate(zip(self.scratch, self.original)) if a != b]
        note = f"changed: {', '.join(changed)}" if changed else "the stored alternatives"
        self.note.setText(note)
        self._draw()

    def _draw(self) -> None:
        series = []
        if self.original_probs:
            series.append(Series("stored", colors.theme().bar_shortcut, self.original_probs, _argmax(self.original_probs)))
        if self.edited() and self.scratch_probs:
            series.append(Series("scratch", colors.theme().bar_scratch, self.scratch_probs, _argmax(self.scratch_probs)))
        self.bars.set_data(len(self.original), self.key, series)


def _argmax(xs: list[float]) -> int | None:
    return max(range(len(xs)), key=xs.__getitem__) if xs else None
