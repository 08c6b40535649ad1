"""The one door to a database (`desktop.store.open_database`): typed errors chosen where SQLite's
error is read, the window's fallback to reading chosen by the error's type, and a database on a
network file system (a mount table given as text, as /proc/self/mountinfo writes it) opened
read-only unless the user insists.  Real databases, real SQLite: nothing of sqlite is mocked."""
from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from desktop import formats
from desktop.domain.changes import Change
from desktop.domain.errors import (Corrupt, Locked, NetworkFilesystem, NewerSchema, NotOurs, ReadOnly,
                                   StoreError)
from desktop.store import Store, connection, network_fs, open_database

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def green_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("door") / "green.db"
    with Store.open(db, annotator="anna") as s:
        s.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
        s.apply(Change("0_0", "comment", "kept"))
    return db


@pytest.fixture
def db(green_db, tmp_path) -> Path:
    copy = tmp_path / "share" / "annotations.db"
    copy.parent.mkdir()
    with Store.open(green_db, read_only=True) as s:  # a consistent copy, WAL content included
        s._c.backup(str(copy))
    return copy


def _mountinfo(share: Path, fstype: str) -> str:
    """This system's mount table with `share` mounted over it as `fstype` (how mountinfo writes it)."""
    point = str(share).replace(" ", "\\040")
    return ("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
            f"99 27 0:77 / {point} rw,relatime shared:1 - {fstype} server:/export rw,vers=4.2\n")


# ---------------------------------------------------------------- typed errors

def test_a_foreign_file_is_not_ours_and_a_newer_schema_is_newer(tmp_path):
    text = tmp_path / "notes.db"
    text.write_text("shopping list\n")
    with pytest.raises(NotOurs, match="is not an SQLite database"):
        open_database(text)
    newer = tmp_path / "newer.db"
    with Store.open(newer):
        pass
    con = sqlite3.connect(newer)
    con.execute("UPDATE schema_version SET version = 99")
    con.commit()
    con.close()
    for mode in ("write", "read", "write-or-read"):
        with pytest.raises(NewerSchema, match="was made by a newer MCQ Lens"):
            open_database(newer, mode)


def test_writing_a_store_opened_for_reading_is_read_only_and_a_lock_is_locked(db, monkeypatch):
    with open_database(db, "read") as s:
        assert s.read_only and s.read_only_reason == "opened for reading"
        with pytest.raises(ReadOnly, match="^read-only: opened for reading, cannot save changes to "):
            s.apply(Change("0_1", "comment", "not saved"))
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.2)
    other = sqlite3.connect(db)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        with open_database(db, "write", annotator="anna") as s:
            with pytest.raises(Locked, match="^database is locked by another program"):
                s.apply(Change("0_1", "comment", "x"))
    finally:
        other.rollback()
        other.close()


def test_a_damaged_json_column_is_corrupt(db):
    con = sqlite3.connect(db)
    con.execute("UPDATE datasets SET extra = '{not json'")
    con.commit()
    con.close()
    with open_database(db, "read") as s:
        with pytest.raises(Corrupt, match="^damaged database: datasets.extra"):
            s.load_datasets()


def test_a_mode_the_door_does_not_know_is_refused(db):
    with pytest.raises(ValueError, match="write-or-read"):
        open_database(db, "append")


# ---------------------------------------------------------------- network file systems

def test_the_mount_table_says_where_a_file_lives(tmp_path):
    share = tmp_path / "team share"
    share.mkdir()
    db = share / "annotations.db"
    table = _mountinfo(share, "nfs4")
    assert network_fs.where(db, table) == network_fs.Mount(str(share), "nfs4")  # \040 read as a space
    assert network_fs.where(tmp_path / "elsewhere.db", table) is None  # beside the share: the local disk
    assert network_fs.where(share / "sub" / "new.db", table).fstype == "nfs4"  # a file not made yet: its folder
    # /proc/mounts' layout, and a local file system over the same folder
    point = str(share).replace(" ", "\\040")
    assert network_fs.where(db, f"/dev/vda / ext4 rw 0 0\nhost:/x {point} cifs rw 0 0\n").fstype == "cifs"
    assert network_fs.where(db, f"/dev/vda / ext4 rw 0 0\n/dev/sdb {point} ext4 rw 0 0\n") is None
    # a later mount on the same point hides the earlier one
    assert network_fs.where(db, table + f"100 99 0:78 / {point} rw - fuse.sshfs me@host: rw\n").fstype == "fuse.sshfs"
    assert network_fs.where(db, "") is None  # no table, nothing judged


def test_a_database_on_a_network_share_opens_for_reading_unless_the_user_insists(db, monkeypatch):
    monkeypatch.delenv(network_fs.ALLOW_ENV, raising=False)
    table = _mountinfo(db.parent, "nfs4")
    before = _sha(db)
    # a task that must write is refused, plainly, before anything is written
    with pytest.raises(NetworkFilesystem) as refused:
        open_database(db, "write", mount_table=table)
    said = str(refused.value)
    assert said.startswith(f"{db} is on a network file system (nfs4 at {db.parent})")
    assert "--allow-network-db" in said and "MCQLENS_ALLOW_NETWORK_DB=1" in said and "mcqlens merge" in said
    with pytest.raises(NetworkFilesystem):
        Store.open(db, mount_table=table)  # the commands' way in: the same rule
    # nor is a new database made there
    with pytest.raises(NetworkFilesystem):
        open_database(db.parent / "new.db", "write", mount_table=table)
    assert not (db.parent / "new.db").exists()
    # the window reads it, and says why
    with open_database(db, "write-or-read", annotator="anna", mount_table=table) as s:
        assert s.read_only and s.read_only_reason == said
        assert s.question("0_0", "anna").comments == ["kept"]
        with pytest.raises(ReadOnly):
            s.apply(Change("0_1", "comment", "not on a share"))
    # reading is reading: allowed (through `mode=ro`: closing never checkpoints into a shared file)
    with open_database(db, "read", mount_table=table) as s:
        assert s.stats()["sources"]
    assert _sha(db) == before
    # the user insists: a parameter, or the environment
    with open_database(db, "write-or-read", annotator="anna", mount_table=table, allow_network=True) as s:
        assert not s.read_only and s.read_only_reason is None
        s.apply(Change("0_1", "comment", "one person, one program"))
    monkeypatch.setenv(network_fs.ALLOW_ENV, "1")
    with open_database(db, "write", annotator="anna", mount_table=table) as s:
        assert s.question("0_1", "anna").comments == ["one person, one program"]
    # a local disk is not judged at all
    monkeypatch.delenv(network_fs.ALLOW_ENV)
    with open_database(db, "write", mount_table="27 1 254:0 / / rw - ext4 /dev/vda rw\n") as s:
        assert not s.read_only


def test_the_window_falls_back_by_the_errors_type_not_its_words(db, tmp_path):
    """A missing file on a share is not opened for reading instead (there is nothing to read)."""
    table = _mountinfo(db.parent, "smb3")
    with pytest.raises(NetworkFilesystem):
        open_database(db.parent / "missing.db", "write-or-read", mount_table=table)
    # every other refusal is the caller's to see, in either write mode
    with pytest.raises(StoreError, match="no database at"):
        open_database(tmp_path / "nowhere.db", "write-or-read", create=False)
    shutil.copyfile(db, tmp_path / "plain.db")
    with open_database(tmp_path / "plain.db", "write-or-read") as s:
        assert not s.read_only and s.read_only_reason is None


# ---------------------------------------------------------------- the way in, and no words read

def test_gui_passes_allow_network_db_to_the_window(monkeypatch, tmp_path):
    import desktop.ui.app as app
    from desktop.cli import main

    seen = []
    monkeypatch.setattr(app, "run", lambda db, **kw: seen.append(kw.get("allow_network")) or 0)
    assert main(["gui", "--db", str(tmp_path / "a.db"), "--allow-network-db"]) == 0
    assert main(["gui", "--db", str(tmp_path / "a.db")]) == 0
    assert seen == [True, None]  # None: MCQLENS_ALLOW_NETWORK_DB decides


def test_nothing_outside_the_store_tells_store_errors_apart_by_their_words():
    words = re.compile(r"""in str\(\w+\)|str\(\w+\)\.(startswith|endswith|lower|find)\(|["'](read-only|disk full|"""
                       r"""locked by another program|not an MCQ Lens)[^"']*["'] in """)
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "desktop").rglob("*.py"))
             if "store" not in path.relative_to(ROOT / "desktop").parts[:1]
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if words.search(line)]
    assert found == []
