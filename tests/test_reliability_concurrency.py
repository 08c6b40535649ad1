"""Two windows or programs on one database: no corruption, no silent lost update, stale
writers detected, and a locked database waits and then says so."""
from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop import formats
from desktop.cli import main
from desktop.domain.changes import Change
from desktop.domain.errors import StoreError
from desktop.store import Store, StaleEditError, connection

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT / ".." / "shared" / "data" / "embrace" / "embrace_green.jsonl"


@pytest.fixture(scope="module")
def green():
    return formats.read(GREEN)


@pytest.fixture
def db(tmp_path, green) -> Path:
    path = tmp_path / "a.db"
    with Store.open(path, annotator="imported") as s:
        s.import_datasets(green, file=str(GREEN))
    return path


def _annotate(db: Path, annotator: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "desktop.cli", "annotate", "--db", str(db),
                             "--annotator", annotator], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


# ---------------------------------------------------------------- stale writers (two windows)

def test_stale_window_is_refused_and_told_who_changed_it(db):
    with Store.open(db, annotator="anna") as win_a, Store.open(db, annotator="anna") as win_b:
        shown = win_a.question("0_0", "anna").comments  # window A shows the item
        version = win_a.row_version("0_0")
        hid_b = win_b.apply(Change("0_0", "comment", "from window B"))
        assert win_a.row_version("0_0") == version + 1  # A can see that it must refresh
        n = len(win_a.history())
        with pytest.raises(StaleEditError) as info:
            win_a.apply(Change("0_0", "comment", "from window A"), expect=shown)
        err = info.value
        assert isinstance(err, StoreError)
        assert err.current == ["from window B"] and err.by["id"] == hid_b and err.by["annotator"] == "anna"
        assert "changed by anna" in str(err) and "reload" in str(err)
        assert len(win_a.history()) == n  # nothing written
        # after refreshing, the window edits on what is stored now: accepted
        hid_a = win_a.apply(Change("0_0", "comment", "from window A"), expect=["from window B"])
    with Store.open(db) as s:
        assert s.question("0_0", "anna").comments == ["from window A"]  # the later edit wins
        rows = [h for h in s.history("0_0") if h.kind == "change"]
        assert [(h.id, h.after) for h in rows] == [(hid_b, ["from window B"]), (hid_a, ["from window A"])]
        assert rows[1].before == ["from window B"]  # the earlier edit stays in history


def test_stale_span_update_and_own_status(db):
    with Store.open(db, annotator="anna") as win_a, Store.open(db, annotator="ben") as win_b:
        span = win_a.question("0_0").spans[0]
        win_b.apply(Change("0_0", "span.update", {"id": span.id, "start": span.start, "end": span.end + 1}))
        with pytest.raises(StaleEditError):
            win_a.apply(Change("0_0", "span.update", {"id": span.id, "start": span.start, "end": span.end - 1}),
                        expect={"start": span.start, "end": span.end})
        # status is each annotator's own (schema 3): ben's "done" leaves anna's window current,
        # anna's own status set in another of her windows makes it stale
        win_b.apply(Change("0_1", "status", "done"))
        win_a.apply(Change("0_1", "status", "in progress"), expect="untouched")
        with Store.open(db, annotator="anna") as win_a2:
            win_a2.apply(Change("0_1", "status", "done"))
        with pytest.raises(StaleEditError, match="changed by anna"):
            win_a.apply(Change("0_1", "status", "untouched"), expect="in progress")
        # comments are each annotator's own: ben's comment does not make anna's window stale
        win_b.apply(Change("0_2", "comment", "ben's"))
        win_a.apply(Change("0_2", "comment", "anna's"), expect="")
    with Store.open(db) as s:
        assert s.question("0_0").spans[0].end == span.end + 1
        assert sorted(s.question("0_2").comments) == ["anna's", "ben's"]


def test_two_processes_on_one_database(db):
    """Two `mcqlens annotate` programs write the same field at once: every acknowledged
    write is in history, the field holds the last one, the file is intact."""
    n = 40
    procs = {who: _annotate(db, who) for who in ("anna", "ben")}
    lines = {who: [json.dumps({"item": "0_0", "field": "status", "value": ["in progress", "done"][i % 2]})
                   + "\n" + json.dumps({"item": f"0_{i % 3}", "field": "comment", "value": f"{who} {i}"})
                   for i in range(n)] for who in procs}
    outs = {}

    def feed(who):
        outs[who] = procs[who].communicate("\n".join(lines[who]) + "\n", timeout=60)

    threads = [threading.Thread(target=feed, args=(who,)) for who in procs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    acked = {}
    for who, (out, err) in outs.items():
        assert procs[who].returncode == 0, err
        ids = [int(line.split()[1]) for line in out.splitlines()]
        assert len(ids) == 2 * n and all(line.startswith("ok ") for line in out.splitlines())
        acked[who] = ids
    assert _integrity(db) == "ok"
    with Store.open(db) as s:
        history = {h.id: h for h in s.history()}
        for who, ids in acked.items():
            for i, hid in enumerate(ids):
                h = history[hid]
                assert h.annotator == who
                want = json.loads(lines[who][i // 2].split("\n")[i % 2])
                assert (h.item, h.field) == (want["item"], want["field"])
        status_rows = [h for h in history.values() if h.field == "status"]
        assert len(status_rows) == 2 * n
        for who in acked:  # status is each annotator's own: their later edit wins
            last = max((h for h in status_rows if h.annotator == who and h.item == "0_0"), key=lambda h: h.id)
            assert {r.item_id: r.status for r in s.items(annotator=who)}["0_0"] == last.after
        for who in acked:
            for item in ("0_0", "0_1", "0_2"):
                mine = [h for h in history.values() if h.field == "comment" and h.item == item
                        and h.annotator == who]
                assert s.question(item, who).comments[-1:] == max(mine, key=lambda h: h.id).after


def test_annotate_reports_a_stale_line_and_goes_on(db):
    p = _annotate(db, "anna")
    script = [{"item": "0_0", "field": "comment", "value": "first", "expect": ""},
              {"item": "0_0", "field": "comment", "value": "second", "expect": ""},  # stale: now "first"
              {"item": "0_0", "field": "comment", "value": "third", "expect": "first"}]
    out, err = p.communicate("\n".join(json.dumps(x) for x in script) + "\n", timeout=30)
    got = out.splitlines()
    assert p.returncode == 1
    assert got[0].startswith("ok ") and got[2].startswith("ok ")
    assert got[1].startswith("error: line 2: item 0_0, field comment: changed by anna")
    with Store.open(db) as s:
        assert s.question("0_0", "anna").comments == ["third"]


# ---------------------------------------------------------------- a locked database

def _hold_write_lock(db: Path) -> sqlite3.Connection:
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE questions SET status = status WHERE id = '0_0'")
    return other


def test_locked_database_waits_for_the_other_program(db):
    other = _hold_write_lock(db)
    release = threading.Timer(1.0, lambda: (other.execute("COMMIT"), other.close()))
    p = _annotate(db, "anna")
    release.start()
    t = time.perf_counter()
    out, err = p.communicate(json.dumps({"item": "0_0", "field": "comment", "value": "after the wait"}) + "\n",
                             timeout=30)
    release.join()
    assert p.returncode == 0, err
    assert out.startswith("ok "), (out, err)
    assert time.perf_counter() - t >= 0.9  # it waited for the lock instead of failing
    with Store.open(db) as s:
        assert s.question("0_0", "anna").comments == ["after the wait"]


def test_locked_database_gives_a_clear_message_then_goes_on(db, monkeypatch, capsys):
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.3)
    other = _hold_write_lock(db)
    lines = [json.dumps({"item": "0_0", "field": "comment", "value": "while locked"}) + "\n",
             json.dumps({"item": "0_0", "field": "comment", "value": "after the other let go"}) + "\n"]

    class Stdin:
        """The other program lets go once the first line has failed."""
        n = 0

        def readline(self):
            if self.n == 1:
                other.execute("ROLLBACK")
                other.close()
            self.n += 1
            return lines[self.n - 1] if self.n <= len(lines) else ""

    monkeypatch.setattr(sys, "stdin", Stdin())
    t = time.perf_counter()
    rc = main(["annotate", "--db", str(db), "--annotator", "anna"])
    waited = time.perf_counter() - t
    out = capsys.readouterr().out.splitlines()
    assert rc == 1  # one line failed
    assert out[0].startswith(f"error: line 1: database is locked by another program: {db}"), out
    assert out[1].startswith("ok ")  # the same process went on with the next line
    assert waited >= 0.3
    assert _integrity(db) == "ok"
    with Store.open(db) as s:
        assert s.question("0_0", "anna").comments == ["after the other let go"]
        assert [h.after for h in s.history("0_0")] == [["after the other let go"]]
