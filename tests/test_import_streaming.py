"""A file too large to hold is imported as it is read: checked whole first, then read again part
by part into one transaction; a long import says how far it is on a stderr that is no terminal.

The files are real RACE items (../shared/data/race, test/high), repeated under distinct ids as
benchmarks/make_big_race.py does for the 190 MB file of issue 24 (its memory and time are in
docs/reliability.md, measured with /usr/bin/time -v; no timing is asserted here).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.app import imports as import_
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
from race_copies import RACE_TEST_HIGH, race_jsonl  # noqa: E402 - tests/race_copies.py


def table(db: Path) -> list:
    with Store.open(db, read_only=True) as store:
        return [(q.id, q.passage_id, q.index, q.stem, q.alternatives, q.key)
                for ds in store.load_datasets() for q in ds.questions()]


def test_a_file_beyond_the_budget_is_read_again_and_stored_the_same(tmp_path, monkeypatch, capsys):
    src = tmp_path / "race.jsonl"
    n = race_jsonl(src, copies=5)
    assert main(["import", str(src), "--db", str(tmp_path / "held.db")]) == 0
    held = capsys.readouterr().out

    # a budget below the file's questions and parts of 50 questions: read twice, stored in parts
    monkeypatch.setattr(import_, "KEEP_QUESTIONS", 100)
    monkeypatch.setattr("desktop.store.importing.IMPORT_PART", 50)
    from desktop import formats

    rereads = []
    real_read = formats.read

    def spy(*args, **kwargs):
        out = real_read(*args, **kwargs)
        rereads.extend(ds.passages for ds in out if isinstance(ds.passages, formats.Reread))
        return out

    monkeypatch.setattr(formats, "read", spy)
    db = tmp_path / "streamed.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    assert len({id(r) for r in rereads}) == 1 and rereads[0].questions == n  # (read() calls itself once)
    streamed = capsys.readouterr().out
    assert streamed.replace(str(db), "DB") == held.replace(str(tmp_path / "held.db"), "DB")
    assert f"added 200 passages, {n} questions" in streamed
    assert table(db) == table(tmp_path / "held.db")
    for db_ in (db, tmp_path / "held.db"):
        out = db_.with_suffix(".jsonl")
        assert main(["export", "race", "--db", str(db_), "-o", str(out)]) == 0
    assert (tmp_path / "streamed.jsonl").read_bytes() == src.read_bytes() == (tmp_path / "held.jsonl").read_bytes()
    # re-importing adds nothing, read again or not
    capsys.readouterr()
    assert main(["import", str(src), "--db", str(db)]) == 0
    assert "already imported" in capsys.readouterr().out


def test_a_file_changed_between_the_readings_is_refused_and_nothing_stored(tmp_path, monkeypatch, capsys):
    src = tmp_path / "race.jsonl"
    race_jsonl(src, copies=3)
    db = tmp_path / "a.db"
    first = sorted(RACE_TEST_HIGH.iterdir())[0]
    assert main(["import", str(first), "--db", str(db)]) == 0
    capsys.readouterr()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    monkeypatch.setattr(import_, "KEEP_QUESTIONS", 10)
    monkeypatch.setattr("desktop.store.importing.IMPORT_PART", 20)
    real = Store.import_files

    def import_files(self, files, *args, **kwargs):
        # after the checking reading, before the storing one: another program rewrites the file
        lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
        last = json.loads(lines[-1])
        last["answers"][0] = "B" if last["answers"][0] != "B" else "C"
        src.write_text("".join(lines[:-1]) + json.dumps(last) + "\n", encoding="utf-8")
        return real(self, files, *args, **kwargs)

    monkeypatch.setattr(Store, "import_files", import_files)
    assert main(["import", str(src), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {src}: the file changed while it was being read; nothing was imported"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    with Store.open(db, read_only=True) as store:
        assert len(store.items()) == len(json.loads(first.read_text(encoding="utf-8"))["questions"])


def test_a_long_import_prints_progress_lines_to_a_stderr_that_is_no_terminal(tmp_path):
    src = tmp_path / "race.jsonl"
    n = race_jsonl(src, copies=25)  # 1,000 passages
    db = tmp_path / "a.db"
    log = tmp_path / "stderr.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCQLENS_PROGRESS_SECONDS": "0.05"}
    with open(log, "w", encoding="utf-8") as err:  # a file, as under nohup, cron or CI
        done = subprocess.run([sys.executable, "-m", "desktop.cli", "import", str(src), "--db", str(db)],
                              stdout=subprocess.PIPE, stderr=err, text=True, cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    reading = [line for line in lines if line.startswith("reading: ")]
    storing = [line for line in lines if line.startswith("storing: ")]
    assert lines == reading + storing, lines  # nothing else, no bar's carriage returns
    assert reading and storing, lines
    assert all("\r" not in line for line in lines)
    assert reading[-1].startswith("reading: 100% (race.jsonl, 1000 records)")
    assert storing[-1] == f"storing: {n}/{n} questions"
    stored = [int(line.split()[1].split("/")[0]) for line in storing]
    assert stored == sorted(set(stored))
    assert done.stdout.splitlines()[-1] == f"{db}: {n} new questions"


@pytest.mark.parametrize("seconds", ["600"])
def test_a_short_import_prints_no_progress(tmp_path, seconds):
    """Shorter than the interval: stderr holds nothing, so a script sees only what matters."""
    src = tmp_path / "race.jsonl"
    race_jsonl(src, copies=1, n_files=5)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCQLENS_PROGRESS_SECONDS": seconds}
    done = subprocess.run([sys.executable, "-m", "desktop.cli", "import", str(src), "--db", str(tmp_path / "a.db")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0 and done.stderr == ""
