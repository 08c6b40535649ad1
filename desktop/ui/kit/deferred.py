"""Updates of a panel nobody can see wait until it is shown.

A tab behind another (Problems while Difficulty is in front, What if… behind the
evidence spot-check) was rebuilt on every move through the items: widgets made,
text laid out, sizes computed for a page the annotator does not look at.  `WhenShown`
keeps only the newest update of such a page and runs it when the page comes to the
front, so a move pays for what is on the screen.

"Hidden" means not visible while its window is: a window that is not shown (yet) updates
every page at once, so what it would show is there whenever it is read or shown.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget


class WhenShown(QObject):
    """Runs `update(key, fn)` now if `page` is showing in its window, else when it is shown."""

    def __init__(self, page: QWidget):
        super().__init__(page)
        self.page = page
        self._pending: dict[str, Callable[[], None]] = {}
        page.installEventFilter(self)

    def hidden(self) -> bool:
        window = self.page.window()
        return window is not self.page and window.isVisible() and not self.page.isVisible()

    def update(self, key: str, fn: Callable[[], None]) -> None:
        """Run `fn` (the page's newest state for `key`), now or when the page is shown."""
        if self.hidden():
            self._pending[key] = fn
            return
        self._pending.pop(key, None)
        fn()

    @property
    def waiting(self) -> bool:
        return bool(self._pending)

    def flush(self) -> None:
        """Bring the page up to date now (before reading it while it is hidden)."""
        pending, self._pending = self._pending, {}
        for fn in pending.values():
            fn()

    def eventFilter(self, obj, event):
        if obj is self.page and event.type() == QEvent.Show and self._pending:
            self.flush()
        return False
