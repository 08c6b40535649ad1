"""The Go menu: next and previous item, next unfinished item, done-and-next, search.

The navigator (desktop/ui/navigator/panel.py) walks the items its filters show.  `GoMenu` is a
part of the window (`window.go_menu`); what it uses of the window: `navigator`, `passage` (the
focus goes back to it), `flush`, `edit` (the status done), `current` and the status bar.
"""
from __future__ import annotations

from functools import partial

from PySide6.QtGui import QKeySequence

from desktop.ui.menus.actions import menu_action


class GoMenu:
    def __init__(self, window):
        self.window = window

    def build(self) -> None:
        """The Go menu, placed next in the menu bar."""
        action = partial(menu_action, self.window)
        go = self.menu = self.window.menuBar().addMenu("&Go")
        action(go, "&Next item", self.next_item, ["Alt+Down"])
        action(go, "&Previous item", self.previous_item, ["Alt+Up"])
        action(go, "Next &unfinished item", self.next_unfinished, ["Ctrl+J"])
        # kept: a scripted annotator (benchmarks/bench_review_flow.py) moves on as the keys do
        self.done_and_next_action = action(go, "Mark &done, go to next unfinished", self.done_and_next,
                                           ["Ctrl+Return", "Ctrl+Enter"])
        action(go, "&Search", lambda: self.window.navigator.search.setFocus(), [QKeySequence.Find])

    def _step(self, step, at_the_end: str, ms: int) -> None:
        """Move with the navigator (text being typed is saved first); say so when there is nowhere to go."""
        w = self.window
        w.flush()
        if step() is None:
            w.statusBar().showMessage(at_the_end, ms)
        w.passage.setFocus()

    def next_item(self) -> None:
        self._step(self.window.navigator.next_item, "This is the last item shown.", 3000)

    def previous_item(self) -> None:
        self._step(self.window.navigator.previous_item, "This is the first item shown.", 3000)

    def next_unfinished(self) -> None:
        self._step(self.window.navigator.next_unfinished, "Every item shown is done.", 5000)

    def done_and_next(self) -> None:
        w = self.window
        before = w.current
        # the item being left is not drawn again first (redraw=False): only the next one is
        if before is not None and w.edit("status", "done", redraw=False) is not None:
            self.next_unfinished()
            if w.current == before:  # nowhere to go: show the item as it is stored now
                w.refresh()
