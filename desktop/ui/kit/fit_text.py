"""Text that fits the widget showing it: cut with "…" where it must be, the whole text in the tooltip.

A narrow panel (a 1366×768 laptop) left Qt to clip one-line text at the widget's edge,
mid-word and without a sign that anything is missing: "acceptabilit", "two or more
distracto", a status message running into the next one.  These widgets end such text
with "…" and put all of it in the tooltip, so nothing is cut unseen; `fits(widget)` is
what the tests ask of every label and combo box in the window.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtGui import Qt as GuiQt  # mightBeRichText lives in QtGui's Qt namespace
from PySide6.QtWidgets import (
    QComboBox, QLabel, QSizePolicy, QStyle, QStyleOptionComboBox, QStylePainter, QWidget,
)

ELLIPSIS = "…"


class ElidedLabel(QLabel):
    """One line of plain text that takes the width it is given and ends with "…" beyond it."""

    def __init__(self, text: str = "", mode: Qt.TextElideMode = Qt.ElideRight, parent: QWidget | None = None):
        super().__init__(parent)
        self._full = ""
        self._tip = ""
        self._mode = mode
        self.setTextFormat(Qt.PlainText)
        # as wide as its text where there is room, narrower (and cut) where there is not
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Show `text` (all of it where there is room)."""
        text = text or ""
        if text == self._full and self.text():
            return
        self._full = text
        self.updateGeometry()
        self._fit()

    def text(self) -> str:  # noqa: D102 - Qt's name: the whole text, as set (what is drawn may end with "…")
        return self._full

    def full_text(self) -> str:
        return self._full

    def set_tip(self, tip: str) -> None:
        """A tooltip of its own (the whole text is shown before it when it is cut)."""
        self._tip = tip
        self._fit()

    def elided(self) -> bool:
        return QLabel.text(self) != self._full

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        m = self.contentsMargins()
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + m.left() + m.right() + 2 * self.margin() + 2,
                     super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.fontMetrics().horizontalAdvance(ELLIPSIS) * 3, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self._full, self._mode, max(width, 0)) if self._full else ""
        if QLabel.text(self) != shown:
            QLabel.setText(self, shown)
        tip = "\n".join(x for x in ((self._full if shown != self._full else ""), self._tip) if x)
        if self.toolTip() != tip:
            QLabel.setToolTip(self, tip)

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt's name
        self.set_tip(tip)


class ElidingCombo(QComboBox):
    """A combo box whose chosen text ends with "…" when the box is narrower than it, and whose
    tooltip then starts with the whole text (Qt would clip it at the arrow, mid-word)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._tip = ""

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt's name
        self._tip = tip
        super().setToolTip(tip)

    def text_room(self) -> int:
        """Pixels the chosen text has beside the arrow (and the icon)."""
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        rect = self.style().subControlRect(QStyle.CC_ComboBox, opt, QStyle.SC_ComboBoxEditField, self)
        icon = opt.iconSize.width() + 4 if not opt.currentIcon.isNull() else 0
        return rect.width() - icon - 4

    def shown_text(self) -> str:
        full = self.currentText()
        return self.fontMetrics().elidedText(full, Qt.ElideRight, max(self.text_room(), 0))

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.isEditable():  # the line edit shows (and scrolls) the text itself
            super().paintEvent(event)
            return
        painter = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.CC_ComboBox, opt)
        full = opt.currentText
        opt.currentText = self.fontMetrics().elidedText(full, Qt.ElideRight, max(self.text_room(), 0))
        painter.drawControl(QStyle.CE_ComboBoxLabel, opt)
        painter.end()
        tip = self._tip if opt.currentText == full else "\n".join(x for x in (full, self._tip) if x)
        if QComboBox.toolTip(self) != tip:
            QComboBox.setToolTip(self, tip)


def _plain(label: QLabel) -> str:
    if label.textFormat() == Qt.PlainText or not GuiQt.mightBeRichText(label.text()):
        return label.text()
    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


def text_width(label: QLabel) -> int:
    """The width one line of `label`'s text needs (rich text as laid out, without wrapping)."""
    if label.textFormat() == Qt.PlainText or not GuiQt.mightBeRichText(label.text()):
        return max((label.fontMetrics().horizontalAdvance(line) for line in label.text().split("\n")), default=0)
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    doc.setHtml(label.text())
    return int(doc.idealWidth() + 0.999)


def fits(widget: QWidget) -> tuple[bool, str]:
    """Whether `widget`'s text is shown whole, or cut with "…" and given whole in its tooltip.

    Returns (ok, what it shows) for a label or a combo box; other widgets are (True, "")."""
    if isinstance(widget, ElidedLabel):
        full = widget.full_text()
        return (not widget.elided() or full in widget.toolTip()), full
    if isinstance(widget, QLabel):
        text = _plain(widget)
        if not text.strip() or widget.pixmap() is not None and not widget.pixmap().isNull():
            return True, text
        room = widget.contentsRect().width() - 2 * widget.margin() - widget.indent() if widget.indent() > 0 else \
            widget.contentsRect().width() - 2 * widget.margin()
        if widget.wordWrap():
            # wrapped text fits when the label is as tall as its lines at its width
            return widget.heightForWidth(widget.width()) <= widget.height() + 2, text
        return text_width(widget) <= room + 1, text
    if isinstance(widget, QComboBox):
        full = widget.currentText()
        if widget.isEditable():
            return True, full  # a line edit scrolls its text; what is typed is never cut off
        if isinstance(widget, ElidingCombo):
            shown = widget.shown_text()
            return shown == full or full in widget.toolTip(), full
        opt = QStyleOptionComboBox()
        widget.initStyleOption(opt)
        rect = widget.style().subControlRect(QStyle.CC_ComboBox, opt, QStyle.SC_ComboBoxEditField, widget)
        return widget.fontMetrics().horizontalAdvance(full) <= rect.width(), full
    return True, ""
