"""The Edit menu: undo and redo, per annotator and persistent across restarts (the store's history).

`EditMenu` is a part of the window (`window.edit_menu`).  What it uses of the window: `backend`
(undo, redo), `flush`, `editing` (the status bar's word on the step), `current`, `refresh`,
`navigator`, the status bar and `error`.
"""
from __future__ import annotations

from functools import partial

from desktop.domain.errors import McqLensError
from desktop.ui.editing.change_words import history_words
from desktop.ui.menus.actions import menu_action


class EditMenu:
    def __init__(self, window):
        self.window = window

    def build(self) -> None:
        """The Edit menu, placed next in the menu bar."""
        action = partial(menu_action, self.window)
        self.menu = self.window.menuBar().addMenu("&Edit")
        self.undo_action = action(self.menu, "&Undo", self.undo, ["Ctrl+Z"])
        self.redo_action = action(self.menu, "&Redo", self.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])

    def undo(self) -> None:
        self._history_step(self.window.backend.undo, "undone")

    def redo(self) -> None:
        self._history_step(self.window.backend.redo, "redone")

    def _history_step(self, fn, verb: str) -> None:
        w = self.window
        w.flush()
        try:
            row = fn()
        except McqLensError as exc:
            w.error(str(exc))
            return
        if row is None:
            w.statusBar().showMessage(f"Nothing to be {verb}.", 3000)
            return
        w.editing.saved(row.id, history_words(row))
        if row.item and row.item != w.current:
            w.refresh(row.item)
            w.navigator.select(row.item)
        else:
            w.refresh()
