"""Databases that are not ours, and ours with hostile values: one `error:` line, the file
untouched (same bytes, same user_version, same journal mode, no file created beside it).
Read commands never create, migrate or switch anything, even on our own old databases."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.domain.errors import StoreError
from desktop.store import SCHEMA_VERSION, Store
from desktop.store.recognise import APPLICATION_ID

ROOT = Path(__file__).resolve().parents[1]
V1 = ROOT / "tests" / "data" / "schema_v1" / "annotations_v1.db"
GREEN = ROOT / ".." / "shared" / "data" / "embrace" / "embrace_green.jsonl"


def _state(db: Path) -> tuple:
    """Everything a write would change: the bytes, the side files, and (read-only) the pragmas."""
    files = sorted(p.name for p in db.parent.iterdir())
    sha = hashlib.sha256(db.read_bytes()).hexdigest()
    if db.stat().st_size == 0:
        return sha, files
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        pragmas = tuple(conn.execute(f"PRAGMA {p}").fetchone()[0]
                        for p in ("user_version", "journal_mode", "application_id"))
        tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))
    finally:
        conn.close()
    return sha, files, pragmas, tables


def _other_program(folder: Path, wal: bool = False) -> Path:
    """An address book another program keeps in SQLite (user_version 7)."""
    folder.mkdir()
    db = folder / "contacts.db"
    conn = sqlite3.connect(db)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    conn.executemany("INSERT INTO contacts VALUES (?, ?)", [("Ada", "1"), ("Alan", "2")])
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    return db


def _zero_byte(folder: Path) -> Path:
    folder.mkdir()
    db = folder / "annotations.db"
    db.write_bytes(b"")
    return db


def _our_tables_other_marker(folder: Path) -> Path:
    """Our tables, but another program's application_id: not ours."""
    folder.mkdir()
    db = folder / "lookalike.db"
    shutil.copyfile(V1, db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA application_id = 1234")
    conn.commit()
    conn.close()
    return db


def _commands(db: Path, tmp: Path) -> list[list[str]]:
    return [["stats", "--db", str(db)],
            ["stats", "--db", str(db), "--json"],
            ["export", "embrace", "--db", str(db), "-o", str(tmp / "out.jsonl")],
            ["export", "csv", "--db", str(db), "-o", str(tmp / "out.csv")],
            ["report", "--db", str(db), "-o", str(tmp / "report")],
            ["agreement", "--db", str(db), "-o", str(tmp / "agreement")],
            ["gui", "--db", str(db), "--screenshot", str(tmp / "shot.png")],
            ["import", str(GREEN), "--db", str(db)],
            ["merge", str(V1), "--db", str(db)]]


@pytest.mark.parametrize("make", [_other_program, lambda f: _other_program(f, wal=True), _zero_byte,
                                  _our_tables_other_marker],
                         ids=["other-program", "other-program-wal", "zero-byte", "our-tables-other-marker"])
def test_a_database_that_is_not_ours_is_never_written(tmp_path, capsys, monkeypatch, make):
    monkeypatch.setenv("MCQLENS_SETTINGS", str(tmp_path / "settings.ini"))
    db = make(tmp_path / "theirs")
    out = tmp_path / "out"
    out.mkdir()
    before = _state(db)
    for args in _commands(db, out):
        assert main(args) == 2, args
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "not an MCQ Lens database" in lines[0], \
            (args, captured.err)
        assert "nothing was changed" in lines[0]
        assert _state(db) == before, args
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"item": "0_0", "field": "comment", "value": "x"}\n'))
    assert main(["annotate", "--db", str(db)]) == 2
    assert "not an MCQ Lens database" in capsys.readouterr().err
    assert _state(db) == before
    assert list(out.iterdir()) == []  # nothing computed or written for a file that is not ours
    from desktop.ui.backend import Backend  # the window's door: refuses too, never reads "for reading" instead
    with pytest.raises(StoreError, match="not an MCQ Lens database"):
        Backend.open(str(db), annotator="anna")
    assert _state(db) == before


def test_new_databases_carry_our_marker_and_the_v1_fixture_is_recognised_without_it(tmp_path):
    db = tmp_path / "new.db"
    Store.open(db).close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.db"]  # no temporary file left
    old = tmp_path / "old.db"
    shutil.copyfile(V1, old)
    assert sqlite3.connect(V1).execute("PRAGMA application_id").fetchone()[0] == 0
    with Store.open(old, read_only=True) as s:
        assert len(s.items()) == 27


def test_reading_an_old_database_migrates_nothing(tmp_path, capsys):
    """stats, export, report, agreement on a v1 file read an upgraded copy in memory."""
    db = tmp_path / "v1" / "annotations.db"
    db.parent.mkdir()
    shutil.copyfile(V1, db)
    before = _state(db)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["stats", "--db", str(db)]) == 0
    assert "schema 1, read through an upgraded copy in memory" in capsys.readouterr().out
    assert main(["export", "embrace", "--db", str(db), "-o", str(out / "green.jsonl")]) == 0
    assert main(["export", "csv", "--db", str(db), "-o", str(out / "items.csv")]) == 0
    assert main(["agreement", "--db", str(db), "-o", str(out / "agreement")]) == 0
    capsys.readouterr()
    assert _state(db) == before  # no backup, no WAL switch, no schema change
    exported = (out / "green.jsonl").read_text(encoding="utf-8").splitlines()
    source = GREEN.read_text(encoding="utf-8").splitlines()[:12]
    assert len(exported) == 12 and json.loads(exported[1]) == json.loads(source[1])  # text 1 was never edited
    with Store.open(db, read_only=True) as s:
        assert s.migrated_from == 1 and s.upgraded_in_memory and s.read_only
        with pytest.raises(StoreError, match="^read-only: opened for reading"):
            s.add_predictions([{"item": "0_0", "model_id": "m", "probabilities": [1, 0, 0, 0]}])
    assert _state(db) == before


def _ours(tmp_path: Path) -> Path:
    db = tmp_path / "ours" / "annotations.db"
    db.parent.mkdir()
    shutil.copyfile(V1, db)
    with Store.open(db):  # upgraded to the current schema, WAL, as a user's file is
        pass
    for bak in db.parent.glob("*.bak-v*"):
        bak.unlink()
    return db


@pytest.mark.parametrize("sql", [
    "UPDATE schema_version SET version = '2a'", "UPDATE schema_version SET version = 2.5",
    "UPDATE schema_version SET version = X'02'", "UPDATE schema_version SET version = 0",
    "UPDATE schema_version SET version = -1", "INSERT INTO schema_version VALUES (3)",
    "DELETE FROM schema_version"], ids=["text", "real", "blob", "zero", "negative", "two-rows", "no-row"])
def test_hostile_schema_version_is_one_line(tmp_path, capsys, sql):
    db = _ours(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(sql)
    conn.commit()
    conn.close()
    before = _state(db)
    for args in (["stats", "--db", str(db)], ["import", str(GREEN), "--db", str(db)]):
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err and "schema version" in err, err
        assert _state(db) == before


def test_newer_schema_is_one_line_and_untouched(tmp_path, capsys):
    db = _ours(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    before = _state(db)
    for args in (["stats", "--db", str(db)], ["export", "csv", "--db", str(db), "-o", str(tmp_path / "x.csv")],
                 ["import", str(GREEN), "--db", str(db)]):
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert err == (f"error: {db} was made by a newer MCQ Lens (schema {SCHEMA_VERSION + 1}, this one knows "
                       f"up to {SCHEMA_VERSION}); nothing was changed"), err
        assert _state(db) == before


@pytest.mark.parametrize("table, column, value", [
    ("questions", "extra", "{not json"), ("questions", "alternatives", '"a string"'),
    ("questions", "alternatives", "[1, 2"), ("dataset_passages", "extra", "[]"), ("spans", "extra", "nope"),
    ("assessments", "values", "{'single': 'quotes'}"), ("datasets", "extra", "\x00"),
])
def test_non_json_in_a_json_column_is_one_line(tmp_path, capsys, table, column, value):
    db = _ours(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(f'UPDATE {table} SET "{column}" = ?', (value,))
    conn.commit()
    conn.close()
    out = tmp_path / "out.jsonl"
    assert main(["export", "embrace", "--db", str(db), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: damaged database: {table}.{column} of row ") and "\n" not in err, err
    assert not out.exists()
