"""The Go menu: next and previous item, next unfinished item, done-and-next, search.

The navigator (desktop/ui/navigator/panel.py) walks the items its filters show.  A mixin of `MainWindow`.
"""
from __future__ import annotations

from PySide6.QtGui import QKeySequence


class GoMenu:
    def _build_go_menu(self, action) -> None:
        go = self.menuBar().addMenu("&Go")
        action(go, "&Next item", self.next_item, ["Alt+Down"])
        action(go, "&Previous item", self.previous_item, ["Alt+Up"])
        action(go, "Next &unfinished item", self.next_unfinished, ["Ctrl+J"])
        action(go, "Mark &done, go to next unfinished", self.done_and_next, ["Ctrl+Return", "Ctrl+Enter"])
        action(go, "&Search", lambda: self.navigator.search.setFocus(), [QKeySequence.Find])

    def next_item(self) -> None:
        self.flush()
        if self.navigator.next_item() is None:
            self.statusBar().showMessage("This is the last item shown.", 3000)
        self.passage.setFocus()

    def previous_item(self) -> None:
        self.flush()
        if self.navigator.previous_item() is None:
            self.statusBar().showMessage("This is the first item shown.", 3000)
        self.passage.setFocus()

    def next_unfinished(self) -> None:
        self.flush()
        if self.navigator.next_unfinished() is None:
            self.statusBar().showMessage("Every item shown is done.", 5000)
        self.passage.setFocus()

    def done_and_next(self) -> None:
        if self.current is not None and self.edit("status", "done") is not None:
            self.next_unfinished()

    def go_to(self, item_id: str) -> bool:
        if self.backend.navigation().rowid(item_id) is None:
            return False
        self.navigator.select(item_id)
        if self.current != item_id:
            self.open_item(item_id)
        return True
