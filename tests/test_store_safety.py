"""The store under adverse conditions: locks, read-only files, newer or older schemas."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from desktop import formats
from desktop.domain.changes import Change
from desktop.domain.errors import StoreError
from desktop.store import Store, connection, schema

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "a.db"
    with Store.open(path, annotator="anna") as s:
        s.import_datasets(formats.read(GREEN), file=str(GREEN))
    return path


def test_locked_database_waits_then_says_so(db, monkeypatch):
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.2)
    other = sqlite3.connect(db)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        with Store.open(db, annotator="anna") as s:
            with pytest.raises(StoreError, match="locked by another program"):
                s.apply(Change("0_0", "comment", "x"))
            assert s.question("0_0")  # reading still works
    finally:
        other.rollback()
        other.close()
    with Store.open(db, annotator="anna") as s:
        assert s.history("0_0") == []


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_database_gives_a_message(db):
    os.chmod(db, 0o444)
    try:
        with pytest.raises(StoreError, match="read-only|cannot open"):
            with Store.open(db) as s:
                s.apply(Change("0_0", "comment", "x"))
    finally:
        os.chmod(db, 0o644)


def test_read_only_connection_write_is_a_store_error(db):
    with Store.open(db, annotator="anna") as s:
        s._c.conn.execute("PRAGMA query_only = ON")
        with pytest.raises(StoreError):
            s.apply(Change("0_0", "comment", "x"))


def test_newer_schema_is_refused(db):
    conn = sqlite3.connect(db)
    conn.execute("UPDATE schema_version SET version = ?", (schema.SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer MCQ Lens"):
        Store.open(db)


def test_upgrade_writes_a_backup_first(db, monkeypatch):
    with Store.open(db) as s:
        before = s.stats()["annotations"]

    def v_next(conn):
        conn.execute("ALTER TABLE questions ADD COLUMN reviewed_at TEXT")

    nxt = schema.SCHEMA_VERSION + 1
    monkeypatch.setattr(schema, "SCHEMA_VERSION", nxt)
    monkeypatch.setitem(schema.MIGRATIONS, nxt, v_next)
    with Store.open(db) as s:
        assert s.migrated_from == nxt - 1
        assert s.stats()["annotations"] == before
        assert s.stats()["schema_version"] == nxt
    backup = Path(f"{db}.bak-v{nxt - 1}")
    assert backup.exists()
    old = sqlite3.connect(backup)
    assert old.execute("SELECT version FROM schema_version").fetchone()[0] == nxt - 1
    assert old.execute("SELECT count(*) FROM questions").fetchone()[0] == before["questions"]
    assert old.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    old.close()


def test_failed_migration_leaves_the_old_schema(db, monkeypatch):
    def broken(conn):
        conn.execute("ALTER TABLE questions ADD COLUMN half TEXT")
        raise sqlite3.OperationalError("disk I/O error")

    nxt = schema.SCHEMA_VERSION + 1
    monkeypatch.setattr(schema, "SCHEMA_VERSION", nxt)
    monkeypatch.setitem(schema.MIGRATIONS, nxt, broken)
    with pytest.raises(StoreError):
        Store.open(db)
    monkeypatch.undo()
    conn = sqlite3.connect(db)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(questions)")]
    conn.close()
    assert "half" not in cols
    with Store.open(db) as s:
        assert s.stats()["schema_version"] == schema.SCHEMA_VERSION


def test_not_a_database(tmp_path):
    bogus = tmp_path / "notes.db"
    bogus.write_text("this is not SQLite " * 100, encoding="utf-8")
    with pytest.raises(StoreError, match="not an MCQ Lens database"):
        Store.open(bogus)
