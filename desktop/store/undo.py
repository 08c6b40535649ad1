"""The Store's undo and redo: per annotator, persistent (read from the history), refused
when someone changed the field since rather than lose their edit.  A part of `Store`
(`store.undoing`); undo and redo are one walk (`_step`) in opposite directions."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from desktop.domain.errors import StoreError

from . import edits
from .connection import Connection
from .history import History
from .rows import HistoryRow

# the annotator's latest change still in effect / most recently undone change
_UNDOABLE = "SELECT id FROM history WHERE annotator=? AND kind='change' AND undone=0 ORDER BY id DESC LIMIT 1"
_REDOABLE = ("SELECT c.id FROM history u JOIN history c ON c.id = u.ref WHERE u.annotator=? AND u.kind='undo' "
             "AND c.undone=1 ORDER BY u.id DESC LIMIT 1")


class Undo:
    """`undo`, `redo`, `can_undo`, `can_redo`; `annotator()` is the store's annotator of the moment."""

    def __init__(self, connection: Connection, audit: History, annotator: Callable[[], str]):
        self._c, self._audit, self._annotator = connection, audit, annotator

    def undo(self, annotator: str | None = None) -> HistoryRow | None:
        """Revert the annotator's latest change still in effect; returns the new "undo"
        history row (its `ref` is the change), or None when there is nothing to undo.

        Refuses (StoreError) when someone changed that field since, rather than lose their edit.
        """
        return self._step(annotator, _UNDOABLE, "undo")

    def redo(self, annotator: str | None = None) -> HistoryRow | None:
        """Re-apply the annotator's most recently undone change; returns the "redo" history row."""
        return self._step(annotator, _REDOABLE, "redo")

    def _step(self, annotator: str | None, find: str, kind: str) -> HistoryRow | None:
        who = annotator or self._annotator()
        with self._c.transaction() as conn:
            row = conn.execute(find, (who,)).fetchone()
            if row is None:
                return None
            change = self._audit.row(conn, row[0])
            # undo goes from the change's `after` back to its `before`; redo the other way
            old, new = (change.after, change.before) if kind == "undo" else (change.before, change.after)
            self._restore(conn, change, old, new)
            conn.execute("UPDATE history SET undone=? WHERE id=?", (1 if kind == "undo" else 0, change.id))
            hid = self._audit.record(conn, who, change.item, change.field, old, new, kind=kind, ref=change.id)
            return self._audit.row(conn, hid)

    def can_undo(self, annotator: str | None = None) -> bool:
        return bool(self._c.query("SELECT 1 FROM history WHERE annotator=? AND kind='change' AND undone=0 LIMIT 1",
                                  (annotator or self._annotator(),)))

    def can_redo(self, annotator: str | None = None) -> bool:
        return bool(self._c.query(
            "SELECT 1 FROM history u JOIN history c ON c.id = u.ref WHERE u.annotator=? AND u.kind='undo' "
            "AND c.undone=1 LIMIT 1", (annotator or self._annotator(),)))

    def _restore(self, conn, change: HistoryRow, expected: Any, state: Any) -> None:
        target = edits.target_of(change.field, change.before, change.after)
        who = change.annotator
        current = edits.get_state(conn, change.item, change.field, who, target)
        if current != expected:
            raise StoreError(f"item {change.item}, field {change.field}: changed since (history {change.id}); "
                             "not undone, to keep the later edit")
        edits.set_state(conn, change.item, change.field, who, state, target)
        conn.execute("UPDATE questions SET row_version = row_version + 1 WHERE id=?", (change.item,))
