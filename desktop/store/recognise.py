"""Is this SQLite file an MCQ Lens database, and of which schema?  Read-only questions only.

A database MCQ Lens creates carries `PRAGMA application_id = APPLICATION_ID` ("MCQL")
from its first byte on (see `opening.create_database`).  Databases made before the marker
existed (the v1 fixture `tests/data/schema_v1/annotations_v1.db`, every v2 file) have
application_id 0 and are recognised by their tables and a `schema_version` table
holding one integer.  Anything else (another program's database, an empty file, an
SQLite file without our tables, a hostile schema version) is refused with one line
before a single byte is written to it.
"""
from __future__ import annotations

import sqlite3

from desktop.domain.errors import NotOurs

APPLICATION_ID = 0x4D43514C  # "MCQL"
# tables every schema since v1 has; the marker-less recognition needs all of them
CORE_TABLES = frozenset({"schema_version", "datasets", "passages", "questions", "history", "annotators"})


def identify(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of the MCQ Lens database on `conn` (read-only queries), or NotOurs."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if app_id not in (0, APPLICATION_ID):
        raise NotOurs(f"{path} is another program's SQLite database (application_id {app_id:#x}), not an "
                      "MCQ Lens database; nothing was changed")
    if not tables:
        raise NotOurs(f"{path} is an empty file or database, not an MCQ Lens database; nothing was changed "
                      "(remove it, or choose another --db)")
    missing = sorted(CORE_TABLES - tables)
    if missing:
        raise NotOurs(f"{path} is another program's SQLite database (no MCQ Lens tables: {', '.join(missing)}), "
                      "not an MCQ Lens database; nothing was changed")
    rows = conn.execute("SELECT version FROM schema_version").fetchall()
    if len(rows) != 1 or type(rows[0][0]) is not int or rows[0][0] < 1:
        found = ", ".join(repr(r[0]) for r in rows[:3]) or "no row"
        raise NotOurs(f"{path}: damaged MCQ Lens database: schema version is {found}, not one whole number; "
                      "nothing was changed")
    return rows[0][0]
