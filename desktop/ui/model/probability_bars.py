"""Bars of model probabilities, one row per alternative, one bar per series (format or what-if)."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from desktop.domain.model import letter
from desktop.ui.kit import colors

_BAR_H = 11.0
_GAP = 2.0
_ROW_GAP = 7.0
_LEFT = 30.0
_RIGHT = 74.0


@dataclass
class Series:
    label: str  # e.g. "Q+{O}"
    color: str
    probabilities: list[float]
    predicted: int | None = None


class ProbabilityBars(QWidget):
    """Per alternative: its letter (the key ticked), then one bar per series with its percentage."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.series: list[Series] = []
        self.n = 0
        self.key: int | None = None
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_data(self, n: int, key: int | None, series: list[Series]) -> None:
        self.n, self.key, self.series = n, key, [s for s in series if s.probabilities]
        self.updateGeometry()
        self.setFixedHeight(self.sizeHint().height())
        self.update()

    def row_height(self) -> float:
        return max(1, len(self.series)) * (_BAR_H + _GAP) + _ROW_GAP

    def sizeHint(self) -> QSize:
        return QSize(260, int(self.n * self.row_height() + 18))

    def paintEvent(self, _event):
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing, True)
        font = QFont(self.font())
        font.setPointSizeF(max(7.5, font.pointSizeF() - 1))
        p.setFont(font)
        t = colors.theme(self.palette())
        width = self.width() - _LEFT - _RIGHT
        # legend
        x = _LEFT
        for s in self.series:
            p.fillRect(QRectF(x, 3, 10, 9), QColor(s.color))
            p.setPen(QPen(QColor(t.text)))
            p.drawText(QRectF(x + 13, 0, 120, 15), Qt.AlignLeft | Qt.AlignVCenter, s.label)
            x += 16 + p.fontMetrics().horizontalAdvance(s.label) + 12
        top = 18.0
        for i in range(self.n):
            y = top + i * self.row_height()
            badge = QRectF(2, y, 22, len(self.series) * (_BAR_H + _GAP) - _GAP if self.series else _BAR_H)
            p.setPen(Qt.NoPen)
            p.setBrush(colors.alternative_color(i))
            p.drawRoundedRect(badge, 3, 3)
            p.setPen(QPen(QColor(t.on_alternative(i))))
            bold = QFont(font)
            bold.setBold(True)
            p.setFont(bold)
            p.drawText(badge, Qt.AlignCenter, letter(i) + ("✓" if i == self.key else ""))
            p.setFont(font)
            for j, s in enumerate(self.series):
                by = y + j * (_BAR_H + _GAP)
                prob = s.probabilities[i] if i < len(s.probabilities) else 0.0
                p.fillRect(QRectF(_LEFT, by, width, _BAR_H), QColor(t.track))
                p.fillRect(QRectF(_LEFT, by, max(1.0, width * prob), _BAR_H), QColor(s.color))
                p.setPen(QPen(QColor(t.text)))
                mark = " ◀" if s.predicted == i else ""
                p.drawText(QRectF(_LEFT + width + 4, by - 2, _RIGHT, _BAR_H + 4), Qt.AlignLeft | Qt.AlignVCenter,
                           f"{100 * prob:4.1f}%{mark}")
        p.end()
