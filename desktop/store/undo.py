"""The Store's undo and redo: per annotator, persistent (read from the history), refused
when someone changed the field since rather than lose their edit."""
from __future__ import annotations

from typing import Any

from desktop.domain.errors import StoreError

from . import edits
from .rows import HistoryRow


class UndoMethods:
    """`Store.undo`, `redo`, `can_undo`, `can_redo` (mixed into `Store`)."""

    def undo(self, annotator: str | None = None) -> HistoryRow | None:
        """Revert the annotator's latest change still in effect; returns the new "undo"
        history row (its `ref` is the change), or None when there is nothing to undo.

        Refuses (StoreError) when someone changed that field since, rather than lose their edit.
        """
        who = annotator or self.annotator
        with self._c.transaction() as conn:
            row = conn.execute("SELECT id FROM history WHERE annotator=? AND kind='change' AND undone=0 "
                               "ORDER BY id DESC LIMIT 1", (who,)).fetchone()
            if row is None:
                return None
            change = self._history_row(conn, row[0])
            self._restore(conn, change, change.after, change.before)
            conn.execute("UPDATE history SET undone=1 WHERE id=?", (change.id,))
            hid = self._history(conn, who, change.item, change.field, change.after, change.before,
                                kind="undo", ref=change.id)
            return self._history_row(conn, hid)

    def redo(self, annotator: str | None = None) -> HistoryRow | None:
        """Re-apply the annotator's most recently undone change; returns the "redo" history row."""
        who = annotator or self.annotator
        with self._c.transaction() as conn:
            row = conn.execute(
                "SELECT c.id FROM history u JOIN history c ON c.id = u.ref WHERE u.annotator=? AND u.kind='undo' "
                "AND c.undone=1 ORDER BY u.id DESC LIMIT 1", (who,)).fetchone()
            if row is None:
                return None
            change = self._history_row(conn, row[0])
            self._restore(conn, change, change.before, change.after)
            conn.execute("UPDATE history SET undone=0 WHERE id=?", (change.id,))
            hid = self._history(conn, who, change.item, change.field, change.before, change.after,
                                kind="redo", ref=change.id)
            return self._history_row(conn, hid)

    def can_undo(self, annotator: str | None = None) -> bool:
        return bool(self._c.query("SELECT 1 FROM history WHERE annotator=? AND kind='change' AND undone=0 LIMIT 1",
                                  (annotator or self.annotator,)))

    def can_redo(self, annotator: str | None = None) -> bool:
        return bool(self._c.query(
            "SELECT 1 FROM history u JOIN history c ON c.id = u.ref WHERE u.annotator=? AND u.kind='undo' "
            "AND c.undone=1 LIMIT 1", (annotator or self.annotator,)))

    def _restore(self, conn, change: HistoryRow, expected: Any, state: Any) -> None:
        target = edits.target_of(change.field, change.before, change.after)
        who = change.annotator
        current = edits.get_state(conn, change.item, change.field, who, target)
        if current != expected:
            raise StoreError(f"item {change.item}, field {change.field}: changed since (history {change.id}); "
                             "not undone, to keep the later edit")
        edits.set_state(conn, change.item, change.field, who, state, target)
        conn.execute("UPDATE questions SET row_version = row_version + 1 WHERE id=?", (change.item,))
