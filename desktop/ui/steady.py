"""Changing a widget only where something changed, so a move through the items re-lays
and repaints what differs, not every panel.

Every `setText` or `setStyleSheet` tells the layouts above the widget that its size may
have changed, and Qt re-lays the window up to its top (`QLayout::activate` always
passes `updateGeometry` on); a style sheet also re-polishes the widget.  Most labels
show the same text from one item to the next, so the cheapest change is none.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QWidget


def set_text(label, text: str) -> bool:
    """`label.setText(text)` unless it already shows `text`; True when it changed."""
    if label.text() == text:
        return False
    label.setText(text)
    return True


def set_tooltip(widget: QWidget, text: str) -> None:
    if widget.toolTip() != text:
        widget.setToolTip(text)


def set_style(widget: QWidget, sheet: str) -> None:
    """`setStyleSheet` unless unchanged (a new sheet re-polishes the widget and its children)."""
    if widget.styleSheet() != sheet:
        widget.setStyleSheet(sheet)


def set_visible(widget: QWidget, visible: bool) -> None:
    if widget.isHidden() == visible:
        widget.setVisible(visible)


def reserve_lines(label: QLabel, lines: int) -> None:
    """Keep room for `lines` lines of `label`'s font, so a text one line longer or shorter
    than the last item's does not move everything below it."""
    label.setMinimumHeight(lines * label.fontMetrics().lineSpacing() + 2 * label.margin() + 2)


def opaque(widget: QWidget) -> QWidget:
    """Fill `widget`'s background itself: a change inside it then repaints it alone, not
    the splitters, tab frames and window behind it."""
    widget.setAutoFillBackground(True)
    return widget


class WrapLabel(QLabel):
    """A word-wrapped label that remembers its height at each width it was asked about.

    For rich text, `QLabel.heightForWidth` lays the whole text out twice on every call (at
    the width asked, then back at its own), and scroll areas and box layouts ask on every
    re-layout, for every wrapped label, changed or not: most of a move's text layout.  The
    answer changes only with the text, the font or the style."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(text, parent)
        self.setWordWrap(True)
        self._heights: dict[int, int] = {}

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        if text != self.text():
            self._heights.clear()
            super().setText(text)

    def setTextFormat(self, fmt) -> None:  # noqa: N802 - Qt's name
        self._heights.clear()
        super().setTextFormat(fmt)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        height = self._heights.get(width)
        if height is None:
            if len(self._heights) > 8:  # a splitter being dragged asks at every width
                self._heights.clear()
            height = self._heights[width] = super().heightForWidth(width)
        return height

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.FontChange, QEvent.StyleChange, QEvent.ContentsRectChange):
            self._heights.clear()
        super().changeEvent(event)
