"""The Edit menu: undo and redo, per annotator and persistent across restarts (the store's history).

A mixin of `MainWindow`.
"""
from __future__ import annotations

from desktop.domain.errors import McqLensError


class EditMenu:
    def _build_edit_menu(self, action) -> None:
        edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = action(edit_menu, "&Undo", self.undo, ["Ctrl+Z"])
        self.redo_action = action(edit_menu, "&Redo", self.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])

    def undo(self) -> None:
        self._history_step(self.backend.undo, "undone")

    def redo(self) -> None:
        self._history_step(self.backend.redo, "redone")

    def _history_step(self, fn, verb: str) -> None:
        self.flush()
        try:
            row = fn()
        except McqLensError as exc:
            self._error(str(exc))
            return
        if row is None:
            self.statusBar().showMessage(f"Nothing to be {verb}.", 3000)
            return
        from desktop.ui.editing.change_words import history_words
        self._saved(row.id, history_words(row))
        if row.item and row.item != self.current:
            self._refresh(row.item)
            self.navigator.select(row.item)
        else:
            self._refresh()
