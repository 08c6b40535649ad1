"""Scroll bars drawn in bands, so that painting one never waits for other threads.

Qt's raster engine hands a gradient or translucent fill of more than ~96 spans to its
GUI thread pool and waits until every part is done (`QT_THREAD_PARALLEL_FILLS` in
qdrawhelper.cpp).  A scroll bar beside a passage or the item list is such a fill (the
Fusion groove and handle are gradients, several hundred lines tall), and it is
repainted on most moves through the items; on a 2-core machine that other programs
keep busy, the wait for the pool's threads was the longest part of a move.  Drawn
through clip rectangles of `BAND` lines, each fill stays small enough to run on the
GUI thread; the pixels are the same (each band draws the same scroll bar, clipped).
"""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QProxyStyle, QStyle

BAND = 24  # lines per band: fewer than 96 spans even where an antialiased edge makes 3 a line


class BandedStyle(QProxyStyle):
    """The application's style, with tall scroll bars and group boxes painted band by band."""

    _BANDED = (QStyle.CC_ScrollBar, QStyle.CC_GroupBox)

    def drawComplexControl(self, control, option, painter, widget=None):  # noqa: N802 - Qt's name
        base = self.baseStyle()
        rect = option.rect
        if control not in self._BANDED or rect.height() <= BAND or painter is None:
            base.drawComplexControl(control, option, painter, widget)
            return
        clip = painter.clipBoundingRect().toAlignedRect() if painter.hasClipping() else rect
        top, bottom = max(rect.top(), clip.top()), min(rect.bottom(), clip.bottom())
        for y in range(top, bottom + 1, BAND):
            painter.save()
            painter.setClipRect(QRect(rect.left(), y, rect.width(), min(BAND, bottom + 1 - y)), Qt.IntersectClip)
            base.drawComplexControl(control, option, painter, widget)
            painter.restore()


def install(app) -> None:
    """Wrap the application's current style (once)."""
    if not isinstance(app.style(), BandedStyle):
        app.setStyle(BandedStyle(app.style().name()))
