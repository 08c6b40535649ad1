"""The Store's history: the audit trail every write adds to, and reading it back.

Each edit, undo, redo, import and batch of model output writes one row in the same
transaction as the write (`History.record`); `history(since=...)` is what a second window
polls, `row_version` what it compares.  A part of `Store` (`store.audit`).
"""
from __future__ import annotations

from typing import Any

from desktop.domain.errors import StoreError

from . import imports
from .connection import Connection
from .decode import loads
from .rows import HistoryRow


class History:
    """The audit trail: read by anyone (`history`, `row_version`, `last_history_id`), added to by
    the other parts inside their own transaction (`record`, `row`)."""

    def __init__(self, connection: Connection):
        self._c = connection

    def history(self, item_id: str | None = None, since: int | None = None) -> list[HistoryRow]:
        """The audit trail, oldest first: all of it, one item's, or the rows after id `since`
        (a second window polls this to refresh after another program's edits)."""
        where, params = [], []
        if item_id is not None:
            where.append("item = ?"); params.append(item_id)
        if since is not None:
            where.append("id > ?"); params.append(since)
        sql = "SELECT * FROM history" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        return [_decode(r) for r in self._c.query(sql, params)]

    def row_version(self, item_id: str) -> int:
        """A counter bumped by every edit, undo and redo of the item (any annotator, any
        program): a window compares it with the value it loaded to know it must refresh."""
        rows = self._c.query("SELECT row_version FROM questions WHERE id=?", (item_id,))
        if not rows:
            raise StoreError(f"unknown item {item_id!r}")
        return rows[0][0]

    def last_history_id(self) -> int:
        return self._c.query("SELECT coalesce(max(id), 0) FROM history")[0][0]

    def record(self, conn, annotator: str, item: str | None, field: str, before: Any, after: Any,
               kind: str = "change", ref: int | None = None) -> int:
        """Add one history row on `conn`, inside the caller's transaction; returns its id."""
        cur = conn.execute(
            "INSERT INTO history (annotator, ts, item, field, before, after, kind, ref) VALUES (?,?,?,?,?,?,?,?)",
            (annotator, imports.now(), item, field, imports.dumps(before), imports.dumps(after), kind, ref))
        return cur.lastrowid

    def row(self, conn, hid: int) -> HistoryRow:
        """History row `hid` as read on `conn` (inside the caller's transaction)."""
        cur = conn.execute("SELECT * FROM history WHERE id=?", (hid,))
        names = [d[0] for d in cur.description]
        return _decode(dict(zip(names, cur.fetchone())))


def _decode(r) -> HistoryRow:
    return HistoryRow(id=r["id"], annotator=r["annotator"], ts=r["ts"], item=r["item"], field=r["field"],
                      before=None if r["before"] is None else loads(r["before"], "history", "before", r["id"]),
                      after=None if r["after"] is None else loads(r["after"], "history", "after", r["id"]),
                      kind=r["kind"], ref=r["ref"], undone=bool(r["undone"]))
