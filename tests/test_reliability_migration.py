"""A database written by the first released schema (tests/data/schema_v1) opens with the
current MCQ Lens and is upgraded in place, after a backup copy is written next to it."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from desktop import formats
from desktop.cli import main
from desktop.domain.changes import Change
from desktop.store import SCHEMA_VERSION, Store, StaleEditError

FIXTURE = Path(__file__).parent / "data" / "schema_v1" / "annotations_v1.db"
GREEN = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "embrace" / "embrace_green.jsonl"
N_LINES = 12  # the fixture holds the first 12 lines of the green file (its README)
EDITED_TEXTS = {"0", "4"}  # texts whose questions the fixture's edits.jsonl touched


@pytest.fixture
def v1_db(tmp_path) -> Path:
    db = tmp_path / "annotations.db"
    shutil.copyfile(FIXTURE, db)
    return db


def _source_lines() -> list[dict]:
    lines = GREEN.read_text(encoding="utf-8").splitlines()[:N_LINES]
    return [json.loads(line) for line in lines]


def _version(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT version FROM schema_version").fetchone()[0]
    finally:
        conn.close()


def test_fixture_is_schema_v1_and_untouched():
    assert _version(FIXTURE) == 1
    assert SCHEMA_VERSION > 1  # otherwise the upgrade path below exercises nothing
    assert FIXTURE.stat().st_size < 300_000


def test_v1_database_upgrades_in_place_with_a_backup(v1_db):
    with Store.open(v1_db) as store:
        assert store.migrated_from == 1
        stats = store.stats()
        assert stats["schema_version"] == SCHEMA_VERSION
        history = store.history()
    backup = Path(f"{v1_db}.bak-v1")
    assert backup.exists()
    assert _version(backup) == 1 and _version(v1_db) == SCHEMA_VERSION
    conn = sqlite3.connect(backup)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM history").fetchone()[0] == len(history)
    conn.close()
    # the content is the source's: 12 texts, their questions, nothing lost
    source = formats.read(GREEN)[0]
    first = source.passages[:N_LINES]
    assert stats["sources"]["embrace"]["passages"] == len(first)
    assert stats["sources"]["embrace"]["questions"] == sum(len(p.questions) for p in first)
    assert [h.kind for h in history].count("import") == 1
    assert [h.kind for h in history].count("undo") == 1


def test_upgraded_database_keeps_edits_and_exports_the_source(v1_db, tmp_path, capsys):
    out = tmp_path / "green.jsonl"
    assert main(["export", "embrace", "--db", str(v1_db), "-o", str(out)]) == 0
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    source = _source_lines()
    assert len(exported) == len(source)
    for got, want in zip(exported, source):
        if str(want["id"]) in EDITED_TEXTS:
            continue
        assert got == want  # untouched texts come back exactly as the released file has them
    with Store.open(v1_db) as store:
        assert store.question("0_0").comments == ["stem ambiguous (schema v1 fixture)"]
        assert store.question("0_2").comments == []  # the undo made under v1 still holds
        assert store.note("4_0", "fixture") == "distractor c is also defensible"
        assert {r.item_id: r.status for r in store.items(annotator="fixture")}["4_0"] == "done"
        assert store.can_redo("fixture")  # the v1 undo can be redone after the upgrade
        assert store.redo("fixture").item == "0_2"
        assert store.question("0_2").comments == ["to be undone"]


def test_v2_additions_work_on_the_upgraded_database(v1_db):
    with Store.open(v1_db, annotator="anna") as store:
        assert store.row_version("0_0") == 0  # edits before v2 were not counted
        store.apply(Change("0_0", "comment", "after upgrade"))
        assert store.row_version("0_0") == 1
        with pytest.raises(StaleEditError):
            store.apply(Change("0_0", "comment", "stale", annotator="fixture"), expect="something else")
    conn = sqlite3.connect(v1_db)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "history_item_field" in names
    conn.close()


def test_second_open_does_not_migrate_again(v1_db):
    Store.open(v1_db).close()
    backup = Path(f"{v1_db}.bak-v1")
    stamp = backup.stat().st_mtime_ns
    with Store.open(v1_db) as store:
        assert store.migrated_from == SCHEMA_VERSION
    assert backup.stat().st_mtime_ns == stamp
    assert not list(v1_db.parent.glob("*.tmp"))


def test_v3_item_status_goes_to_whoever_set_it(v1_db):
    """Schema 3: status is per annotator.  The fixture's history: "fixture" commented on 0_0,
    marked evidence and answerability on 0_1, commented on 0_2 (undone), wrote a note on 4_0
    and set it done; the v1 item status (0_0, 0_1, 0_2 in progress, 4_0 done) becomes theirs."""
    conn = sqlite3.connect(FIXTURE)
    legacy = dict(conn.execute("SELECT id, status FROM questions WHERE status != 'untouched'"))
    setters = {r[0] for r in conn.execute("SELECT annotator FROM history WHERE kind = 'change'")}
    conn.close()
    assert setters == {"fixture"}
    with Store.open(v1_db, annotator="anna") as store:
        mine = {r.item_id: r.status for r in store.items(annotator="fixture") if r.status != "untouched"}
        assert mine == legacy
        assert all(r.status == "untouched" for r in store.items())  # anna has touched nothing
        assert {r.item_id: r.n_done for r in store.items() if r.n_done} == {"4_0": 1}
        stats = store.stats()
        assert stats["status"]["done"] == 1 and stats["status"]["in progress"] == 3
        assert stats["status_by_annotator"] == {"fixture": {"done": 1, "in progress": 3}}
        # the FTS5 index was built from the stored texts
        assert "4_0" in store.search(store.question("4_0").stem)
    conn = sqlite3.connect(v1_db)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert {"item_status", "questions_fts", "passages_fts"} <= tables
