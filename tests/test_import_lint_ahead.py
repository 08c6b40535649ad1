"""A large import lints its next part in a second process (desktop/store/lint_ahead.py): the
database is the same row for row, lint facts included, whether the lint ran there, here (one
processor, a process that cannot start or that dies) or both; the second process opens no file of
the database and is gone when the import ends, well or not.  Python's cyclic garbage collector is
paused while an import runs and back after it, however it ends.

The files are real RACE items (../shared/data/race, test/high) repeated under distinct ids, as
benchmarks/make_big_race.py writes them; the parts are made small so that a small file has many.
"""
from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from desktop.app import imports as import_
from desktop.cli import main
from desktop.store import imports as store_imports
from desktop.store import lint_ahead, lint_facts, lint_worker
from race_copies import race_jsonl

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("passages", "questions", "dataset_passages", "datasets", "imports", "history", "annotators")


def rows(db: Path) -> dict:
    """Every row of the import's tables, times left out (they differ from run to run)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = {}
        for t in TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({t})")
                    if r[1] not in ("imported_at", "ts", "created_at")]
            out[t] = conn.execute(f"SELECT {', '.join(cols)} FROM {t} ORDER BY rowid").fetchall()
        return out
    finally:
        conn.close()


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of 60 questions, linted beside from 100 questions on, the file read twice."""
    monkeypatch.setattr("desktop.store.importing.IMPORT_PART", 60)
    monkeypatch.setattr(lint_ahead, "FROM_QUESTIONS", 100)
    monkeypatch.setattr(import_, "KEEP_QUESTIONS", 100)
    monkeypatch.setattr(lint_ahead, "processors", lambda: 2)


@pytest.fixture
def linted_here(monkeypatch):
    """The questions linted in this process (the second process's are not seen here)."""
    seen = []
    real = lint_facts.question_lints

    def spy(items):
        seen.extend(items)
        return real(items)

    monkeypatch.setattr(lint_facts, "question_lints", spy)
    return seen


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    path = tmp_path_factory.mktemp("race") / "race.jsonl"
    race_jsonl(path, copies=3, n_files=30)
    return path


@pytest.fixture(scope="module")
def reference(src, tmp_path_factory):
    """The file imported with the lint in this process only, in one part."""
    db = tmp_path_factory.mktemp("ref") / "ref.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    return rows(db)


def test_the_lint_found_beside_is_stored_as_the_lint_found_here(src, reference, tmp_path, small_parts, linted_here):
    db = tmp_path / "a.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    assert linted_here == []  # every part's lint came from the second process
    assert rows(db) == reference
    lints = [r[-2] for r in reference["questions"]]
    assert any(lint != "[]" for lint in lints) and any(lint == "[]" for lint in lints)  # both kinds compared


def test_one_processor_lints_here(src, reference, tmp_path, small_parts, linted_here, monkeypatch):
    monkeypatch.setattr(lint_ahead, "processors", lambda: 1)
    started = []
    monkeypatch.setattr(lint_worker.Worker, "__init__", lambda self: started.append(1))
    assert main(["import", str(src), "--db", str(tmp_path / "a.db")]) == 0
    assert started == [] and len(linted_here) == len(reference["questions"])
    assert rows(tmp_path / "a.db") == reference


def test_a_second_process_that_cannot_start_leaves_the_lint_here(src, reference, tmp_path, small_parts,
                                                                 linted_here, monkeypatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    assert main(["import", str(src), "--db", str(tmp_path / "a.db")]) == 0
    assert len(linted_here) == len(reference["questions"])
    assert rows(tmp_path / "a.db") == reference


def test_a_second_process_that_dies_leaves_the_rest_of_the_lint_here(src, reference, tmp_path, small_parts,
                                                                     linted_here, monkeypatch):
    real = lint_worker.Worker.result
    calls = []

    def result(self, n):
        calls.append(n)
        if len(calls) == 2:
            self._proc.kill()  # gone before its second answer
            self._proc.wait()
        return real(self, n)

    monkeypatch.setattr(lint_worker.Worker, "result", result)
    assert main(["import", str(src), "--db", str(tmp_path / "a.db")]) == 0
    assert 0 < len(linted_here) < len(reference["questions"])
    assert rows(tmp_path / "a.db") == reference


def test_the_second_process_opens_no_file_of_the_database_and_ends_with_the_import(src, tmp_path, small_parts,
                                                                                   monkeypatch):
    workers = []
    real = lint_worker.Worker.result

    def result(self, n):
        if sys.platform.startswith("linux"):
            fds = Path(f"/proc/{self._proc.pid}/fd")
            opened = set()
            for fd in os.listdir(fds):
                try:  # a descriptor may close between the listing and the read (the worker's pipes)
                    opened.add(os.readlink(fds / fd))
                except FileNotFoundError:
                    pass
            assert not any(p.startswith(str(tmp_path / "a.db")) for p in opened), opened
        workers.append(self._proc)
        return real(self, n)

    monkeypatch.setattr(lint_worker.Worker, "result", result)
    assert main(["import", str(src), "--db", str(tmp_path / "a.db")]) == 0
    assert workers and all(p.poll() is not None for p in workers)


def test_bad_input_in_a_late_part_is_one_error_and_the_database_unchanged(tmp_path, small_parts, capsys):
    src = tmp_path / "race.jsonl"
    race_jsonl(src, copies=3, n_files=30)
    db = tmp_path / "a.db"
    # stored first: the file's last passage, with another text
    last = json.loads(src.read_text(encoding="utf-8").splitlines()[-1])
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({**last, "article": last["article"] + " (another text)"}) + "\n", encoding="utf-8")
    assert main(["import", str(one), "--db", str(db)]) == 0
    capsys.readouterr()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    started = []
    real_init = lint_worker.Worker.__init__

    def init(self):
        real_init(self)
        started.append(self)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(lint_worker.Worker, "__init__", init)
        assert main(["import", str(src), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {src}, record {last['id']}, field text: a passage with this id is already stored "
                   "with a different text"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert started and all(w._proc.poll() is not None for w in started)


def test_the_garbage_collector_is_paused_while_importing_and_back_after(src, tmp_path, monkeypatch, capsys, request):
    during = []
    real = store_imports.plan_import

    def plan_import(*args, **kwargs):
        during.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(store_imports, "plan_import", plan_import)
    if not gc.isenabled():  # a window built earlier in this process (its main-thread collector) paused it
        gc.enable()
        request.addfinalizer(gc.disable)
    assert gc.isenabled()
    assert main(["import", str(src), "--db", str(tmp_path / "a.db")]) == 0
    assert during and not any(during) and gc.isenabled()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "article": "A text.", "questions": ["Q?"], "options": [["a", "b"]], "answers": ["C"]}\n',
                   encoding="utf-8")
    assert main(["import", str(bad), "--db", str(tmp_path / "a.db")]) == 2
    assert gc.isenabled()
