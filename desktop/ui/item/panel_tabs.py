"""The side panel's tabs (Difficulty, Problems, Comments & status), each page scrolling on its own.

A page scrolls rather than cuts its text when the window is small (a 1366×768 laptop),
and its scroll area keeps the page's changes inside it: a label that changes on a move
re-lays its page, not the tab widget, whose own re-layout repaints every page and frame
it holds (`QTabWidget` answers each layout request with a full update).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QScrollArea, QStyle, QTabWidget, QWidget


class PageScroll(QScrollArea):
    """Scrolls its page up and down, never sideways: it is at least as wide as the page needs."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._bar = self._bar_width()

    def _bar_width(self) -> int:
        return self.style().pixelMetric(QStyle.PM_ScrollBarExtent, None, self)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.type() == QEvent.StyleChange:  # asked here, not during the layout: the old style may be gone
            self._bar = self._bar_width()
        super().changeEvent(event)

    def minimumSizeHint(self):  # noqa: N802 - Qt's name
        hint = super().minimumSizeHint()
        page = self.widget()
        if page is not None:
            hint.setWidth(max(hint.width(), page.minimumSizeHint().width() + self._bar + 2 * self.frameWidth()))
        return hint


def scrolling(page: QWidget, background: QPalette.ColorRole = QPalette.Window) -> QScrollArea:
    """`page` in a frameless scroll area that gives it the whole width and scrolls it vertically."""
    area = PageScroll()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the page wraps to the width it is given
    area.setWidget(page)
    area.viewport().setBackgroundRole(background)  # the page's own colour, not a list's
    area.setAccessibleName(page.accessibleName())
    return area


class PanelTabs(QTabWidget):
    """Tabs whose pages scroll; a page is named by its panel (`setCurrentWidget(window.problems)`)."""

    def add_panel(self, panel: QWidget, title: str) -> int:
        return self.addTab(scrolling(panel), title)

    def _page_of(self, widget: QWidget | None):
        for i in range(self.count()):
            page = self.widget(i)
            if page is widget or (isinstance(page, QScrollArea) and page.widget() is widget):
                return page
        return widget

    def indexOf(self, widget: QWidget) -> int:  # noqa: N802 - Qt's name
        return super().indexOf(self._page_of(widget))

    def setCurrentWidget(self, widget: QWidget) -> None:  # noqa: N802 - Qt's name
        super().setCurrentWidget(self._page_of(widget))

    def current_panel(self) -> QWidget | None:
        page = self.currentWidget()
        return page.widget() if isinstance(page, QScrollArea) else page
