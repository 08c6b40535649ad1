"""The model's queue and the end of the window (issue 29), in a process of its own with the tiny
test model: closing the window while the queue scores ends the process (nothing left behind)
and loses no stored row; killing it (SIGKILL) mid-queue leaves a database that passes
`PRAGMA integrity_check` with every earlier edit in it."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from desktop import formats
from desktop.store import Store
from inference.giveaway_result import variant as giveaway_variant

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"
TINY = ROOT / "tests" / "data" / "tiny_model"

# The window process: three edits, then the queue scores ahead of the open item; once a few
# stages are stored it says so and is closed (argv[2] == "close") or waits to be killed.
SCRIPT = textwrap.dedent("""
    import os, sys
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import Qt, QTimer
    from desktop.ui.app import application, shut_down
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    db, mode = sys.argv[1], sys.argv[2]
    app = application()
    w = MainWindow(Backend.open(db, annotator="kim"), facts=False)
    w.show()
    ids = [w.edit("status", "in progress"), w.edit("difficulty.pod", "none"),
           w.edit("comment", "checked before the model ran")]
    print("EDITS", *ids, flush=True)
    arrived = []

    def stage(item, name, _payload):  # in the model's thread, once the stage is stored
        arrived.append((item, name))
        if len(arrived) == 8:
            print("SCORING", ";".join(f"{i},{s}" for i, s in arrived), flush=True)

    def look():  # in the window's thread
        if len(arrived) >= 8 and mode == "close":
            app.quit()

    w.model_review.worker.stageReady.connect(stage, Qt.DirectConnection)
    timer = QTimer()
    timer.timeout.connect(look)
    timer.start(20)
    app.exec()
    shut_down(w)  # what `mcqlens gui` does when its window closes
    w.backend.close()
    print("CLOSED", len(arrived), flush=True)
""")

needs_model = pytest.mark.skipif(not (TINY / "card.json").is_file(), reason="tiny test model not built")


def _start(tmp_path, mode: str):
    db = tmp_path / "annotations.db"
    with Store.open(db, annotator="imported") as store:
        store.import_datasets(formats.read(GREEN), file=GREEN)
    script = tmp_path / "window.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", MCQLENS_SETTINGS=str(tmp_path / "s.ini"),
               MCQLENS_MODEL=str(TINY), MCQLENS_SCORE_AHEAD="20", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, str(script), str(db), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    return db, script, proc


def _read_until(proc, word: str) -> str:
    line = ""
    while not line.startswith(word):
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"window process ended: {proc.stderr.read()[-3000:]}")
    return line


def _stored(db: Path, lines: str) -> None:
    """Every stage the window reported is in the database."""
    with Store.open(db, create=False) as store:
        for pair in lines.split(" ", 1)[1].strip().split(";"):
            item, stage = pair.split(",")
            preds = {p.input_format: p for p in store.predictions(item)}
            if stage in ("probabilities", "evidence"):
                assert set(preds) == {"standard", "shortcut"}, (item, stage)
            if stage == "evidence":
                assert preds["standard"].evidence, item
            if stage == "giveaway":
                assert store.explanation(item, "tiny-bert-2x32", giveaway_variant()) is not None, item


def _edits_kept(db: Path, ids: list[int]) -> None:
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        found = {r[0] for r in c.execute("SELECT id FROM history")}
    assert set(ids) <= found
    with Store.open(db, create=False, annotator="kim") as store:
        first = store.items()[0].item_id
        q = store.question(first, annotator="kim")
        assert any("checked before the model ran" in str(c) for c in q.comments), q.comments


@needs_model
def test_closing_while_the_queue_scores_ends_the_process_and_keeps_every_row(tmp_path):
    db, script, proc = _start(tmp_path, "close")
    try:
        ids = [int(x) for x in _read_until(proc, "EDITS").split()[1:]]
        scoring = _read_until(proc, "SCORING")
        t0 = time.monotonic()
        closed = _read_until(proc, "CLOSED")
        proc.wait(60)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0 and took < 30, (proc.returncode, took, proc.stderr.read()[-2000:])
    assert int(closed.split()[1]) >= 8
    # no process is left behind: none runs the window's script any more
    left = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if str(script) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    left.append(pid)
            except OSError:
                pass
    assert left == []
    _stored(db, scoring)
    _edits_kept(db, ids)


@needs_model
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_queue_leaves_an_intact_database_with_every_earlier_edit(tmp_path):
    db, _script, proc = _start(tmp_path, "wait")
    try:
        ids = [int(x) for x in _read_until(proc, "EDITS").split()[1:]]
        scoring = _read_until(proc, "SCORING")
        os.kill(proc.pid, signal.SIGKILL)  # the queue has 20 items ahead: it is scoring now
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    _edits_kept(db, ids)
    _stored(db, scoring)
