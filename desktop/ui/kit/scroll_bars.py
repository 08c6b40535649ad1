"""Scroll bars painted with plain fills, so that painting one never waits for other threads.

Qt's raster engine hands a gradient or translucent fill of more than ~96 spans to its
GUI thread pool and waits until every part is done (`QT_THREAD_PARALLEL_FILLS` in
qdrawhelper.cpp).  The Fusion scroll bar beside a passage or the item list is such a
fill (groove and handle are gradients, several hundred lines tall) and it is repainted
on most moves through the items: on a 2-core machine that other programs keep busy,
waiting for the pool's threads was the longest part of a move.  Opaque solid fills stay
on the GUI thread (`qt_rectfill`), so the groove and the handle are drawn with those;
the arrows are the style's own, in their small squares.  Everything else is the
application's style unchanged.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOption

from desktop.ui.kit import colors


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(round(a.red() + (b.red() - a.red()) * t), round(a.green() + (b.green() - a.green()) * t),
                  round(a.blue() + (b.blue() - a.blue()) * t))


def bar_colours(palette: QPalette, hover: bool = False, pressed: bool = False) -> tuple[QColor, QColor, QColor]:
    """(groove, handle, handle's edge): the handle at least 3:1 against the groove (WCAG 1.4.11)."""
    groove = _mix(palette.color(QPalette.Window), palette.color(QPalette.Base), 0.5)
    text = palette.color(QPalette.WindowText)
    handle = _mix(groove, text, 0.42 if not (hover or pressed) else 0.55 if hover and not pressed else 0.65)
    while colors.contrast(handle.name(), groove.name()) < 3.0:
        handle = _mix(handle, text, 0.2)
    edge = _mix(handle, text, 0.25)
    return groove, handle, edge


class FlatScrollBars(QProxyStyle):
    """The application's style, with scroll bars drawn in solid colours."""

    def drawComplexControl(self, control, option, painter, widget=None):  # noqa: N802 - Qt's name
        base = self.baseStyle()
        if control != QStyle.CC_ScrollBar or painter is None:
            base.drawComplexControl(control, option, painter, widget)
            return
        sub = lambda part: base.subControlRect(control, option, part, widget)  # noqa: E731
        active = option.activeSubControls
        hover = bool(option.state & QStyle.State_MouseOver) and bool(active & QStyle.SC_ScrollBarSlider)
        pressed = bool(option.state & QStyle.State_Sunken) and bool(active & QStyle.SC_ScrollBarSlider)
        groove, handle, edge = bar_colours(option.palette, hover, pressed)
        painter.fillRect(option.rect, groove)
        slider = sub(QStyle.SC_ScrollBarSlider)
        if option.subControls & QStyle.SC_ScrollBarSlider and slider.isValid() and option.maximum > option.minimum:
            inner = slider.adjusted(2, 2, -2, -2) if min(slider.width(), slider.height()) > 8 else slider
            painter.fillRect(inner, edge)
            painter.fillRect(inner.adjusted(1, 1, -1, -1), handle)
        horizontal = option.orientation == Qt.Horizontal
        for part, arrow in ((QStyle.SC_ScrollBarSubLine, QStyle.PE_IndicatorArrowLeft if horizontal
                             else QStyle.PE_IndicatorArrowUp),
                            (QStyle.SC_ScrollBarAddLine, QStyle.PE_IndicatorArrowRight if horizontal
                             else QStyle.PE_IndicatorArrowDown)):
            rect = sub(part)
            if not (option.subControls & part) or not rect.isValid() or rect.isEmpty():
                continue
            arrow_option = QStyleOption(option)
            arrow_option.rect = QRect(rect).adjusted(2, 2, -2, -2)
            base.drawPrimitive(arrow, arrow_option, painter, widget)


def install(app) -> None:
    """Wrap the application's current style (once)."""
    if not isinstance(app.style(), FlatScrollBars):
        app.setStyle(FlatScrollBars(app.style().name()))
