"""Changing a widget only where something changed, so a move through the items re-lays
and repaints what differs, not every panel.

Every `setText` or `setStyleSheet` tells the layouts above the widget that its size may
have changed, and Qt re-lays the window up to its top (`QLayout::activate` always
passes `updateGeometry` on); a style sheet also re-polishes the widget.  Most labels
show the same text from one item to the next, so the cheapest change is none.
"""
from __future__ import annotations

import html
import re

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import Qt as GuiQt  # mightBeRichText lives in QtGui's Qt namespace
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

    # more room than the plain text's words need: bold and larger runs of rich text are wider
    _RICH = 1.2

    def __init__(self, text: str = "", parent: QWidget | None = None, extra_width: int = 0):
        super().__init__(text, parent)
        self.setWordWrap(True)
        self.extra_width = extra_width  # what the text's layout adds beside its words (a table's first column)
        self._heights: dict[int, int] = {}
        self._hints: tuple[QSize, QSize] | None = None

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        if text != self.text():
            self._forget()
            super().setText(text)

    def setTextFormat(self, fmt) -> None:  # noqa: N802 - Qt's name
        self._forget()
        super().setTextFormat(fmt)

    def _forget(self) -> None:
        self._heights.clear()
        self._hints = None

    def _size_hints(self) -> tuple[QSize, QSize]:
        """(minimum, preferred) from the words' widths: QLabel lays a wrapped rich text out at
        width 0 (a word a line), at full width and at a "golden" width to find them, each time
        its text changes; its widest word and one line are what a layout needs of it."""
        if self._hints is None:
            fm = self.fontMetrics()
            m = self.contentsMargins()
            pad = m.left() + m.right() + 2 * self.margin() + self.extra_width + 2
            words = _plain(self.text()).split()
            scale = self._RICH if self.textFormat() != Qt.PlainText and _rich(self.text()) else 1.0
            widest = int(max((fm.horizontalAdvance(w) for w in words), default=0) * scale) + pad
            line = fm.lineSpacing() + m.top() + m.bottom() + 2 * self.margin()
            one_line = int(fm.horizontalAdvance(" ".join(words)) * scale) + pad
            width = min(max(widest, min(one_line, 360)), self.maximumWidth())
            self._hints = (QSize(widest, line), QSize(width, self.heightForWidth(width)))
        return self._hints

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._size_hints()[0]

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._size_hints()[1]

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        height = self._heights.get(width)
        if height is None:
            if len(self._heights) > 8:  # a splitter being dragged asks at every width
                self._heights.clear()
            height = self._heights[width] = super().heightForWidth(width)
        return height

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.FontChange, QEvent.StyleChange, QEvent.ContentsRectChange):
            self._forget()
        super().changeEvent(event)


_TAG = re.compile(r"<[^>]*>")


def _rich(text: str) -> bool:
    return GuiQt.mightBeRichText(text)


def _plain(text: str) -> str:
    """The words of a label's text, markup left out (enough to measure them)."""
    if not GuiQt.mightBeRichText(text):
        return text
    return html.unescape(_TAG.sub(" ", text.replace("<br>", " ")))
