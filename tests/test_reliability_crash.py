"""Crash safety: `mcqlens annotate` killed with SIGKILL at random moments, 50 times.

After every kill the database passes `PRAGMA integrity_check`, and every change whose
`ok <history id>` was printed before the kill is in the database and in the export.
"""
from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT / ".." / "shared" / "data" / "embrace" / "embrace_green.jsonl"
KILLS = 50
N_LINES = 12  # a small store: the first 12 texts of the green file

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


class Run:
    """One `mcqlens annotate` process, its script, and the acknowledgements it printed."""

    def __init__(self, db: Path, run: int, items: list[str], rng: random.Random):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "desktop.cli", "annotate", "--db", str(db), "--annotator", "crash"],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            bufsize=1)
        self.script = []
        for i in range(300):
            item = rng.choice(items)
            if i % 3 == 2:
                self.script.append({"item": item, "field": "span.add",
                                    "value": {"role": "evidence", "start": i, "end": i + 5}})
            else:
                self.script.append({"item": item, "field": "comment", "value": f"run {run} edit {i}"})
        self.acks: list[str] = []
        self.first_ack = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.acks.append(line.strip())
            self.first_ack.set()
        self.first_ack.set()

    def feed(self):
        try:
            self.proc.stdin.write("".join(json.dumps(x) + "\n" for x in self.script))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.reader.join(5)
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass


@pytest.fixture
def small_db(tmp_path) -> Path:
    src = tmp_path / "green12.jsonl"
    src.write_text("\n".join(GREEN.read_text(encoding="utf-8").splitlines()[:N_LINES]) + "\n", encoding="utf-8")
    db = tmp_path / "crash.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    return db


def _check_after_kill(db: Path, run: Run, export: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    acked = []
    for i, line in enumerate(run.acks):
        assert line.startswith("ok "), line  # every line of the script is valid
        acked.append((int(line.split()[1]), run.script[i]))
    with Store.open(db) as store:
        history = {h.id: h for h in store.history()}
        for hid, change in acked:
            h = history[hid]  # acknowledged => committed
            assert (h.item, h.field, h.annotator) == (change["item"], change["field"], "crash")
            if change["field"] == "comment":
                assert h.after == [change["value"]]
            else:
                span = {k: h.after[k] for k in ("role", "start", "end")}
                assert span == change["value"]
                assert h.after["id"] in {s.id for s in store.question(h.item).spans}
        # what the export must show: each item's latest committed comment
        latest: dict[str, tuple[int, list]] = {}
        for h in history.values():
            if h.field == "comment" and h.annotator == "crash":
                latest[h.item] = max(latest.get(h.item, (0, [])), (h.id, h.after))
    assert main(["export", "embrace", "--db", str(db), "-o", str(export), "--force"]) == 0
    comments = {}
    for line in export.read_text(encoding="utf-8").splitlines():
        text = json.loads(line)
        for q in text["test"]:
            comments[str(q["id"])] = q.get("annotations", {}).get("comments", [])
    for hid, change in acked:
        if change["field"] == "comment":
            last_id, last_after = latest[change["item"]]
            assert last_id >= hid
            assert last_after[0] in comments[change["item"]]
    return len(acked)


def test_sigkill_fifty_times_loses_no_acknowledged_change(small_db, tmp_path, capsys):
    rng = random.Random(20261126)
    with Store.open(small_db) as store:
        items = [r.item_id for r in store.items()]
    export = tmp_path / "export.jsonl"
    acknowledged = killed_mid_stream = 0
    started = time.perf_counter()
    nxt = Run(small_db, 0, items, rng)
    for run_no in range(KILLS):
        run = nxt
        # the next process starts up while this one is killed and checked
        nxt = Run(small_db, run_no + 1, items, rng) if run_no + 1 < KILLS else None
        run.feed()
        run.first_ack.wait(30)
        time.sleep(rng.uniform(0.0, 0.08))  # a random moment while it is committing
        run.kill()
        if len(run.acks) < len(run.script):
            killed_mid_stream += 1
        acknowledged += _check_after_kill(small_db, run, export)
        capsys.readouterr()
    elapsed = time.perf_counter() - started
    print(f"{KILLS} kills, {killed_mid_stream} mid-stream, {acknowledged} acknowledged changes, {elapsed:.1f} s")
    assert killed_mid_stream >= KILLS // 2  # the kills really fell between commits, not after the script
    assert acknowledged > KILLS


def _size(path: Path) -> int:
    """The file's size, 0 while it does not exist: the import's first connections create and
    remove the WAL before the write transaction begins (seen: gone between exists() and stat())."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def test_import_killed_midway_stores_all_or_nothing(tmp_path):
    """An import is one transaction: killed while it writes, no file is in part."""
    from desktop import formats

    data = ROOT / ".." / "shared" / "data"
    files = [data / "embrace" / "embrace_yellow.jsonl", data / "embrace" / "embrace_green.jsonl",
             data / "expmrc" / "expmrc-race-dev.json", data / "dream" / "train.json"]
    n_questions = sum(1 for f in files for d in formats.read(f) for _ in d.questions())
    rng = random.Random(7)
    outcomes = []
    for attempt in range(4):
        db = tmp_path / f"import{attempt}.db"
        wal = Path(f"{db}-wal")
        proc = subprocess.Popen([sys.executable, "-m", "desktop.cli", "import", *map(str, files), "--db", str(db)],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt < 3:
            deadline = time.monotonic() + 60
            # the write transaction has begun once pages spill into the WAL (the schema alone is far smaller)
            while proc.poll() is None and time.monotonic() < deadline and _size(wal) < 2 * 2**20:
                time.sleep(0.002)
            time.sleep(rng.uniform(0, 0.05))
            proc.send_signal(signal.SIGKILL)
        proc.wait(120)
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            stored = conn.execute("SELECT count(*) FROM questions").fetchone()[0]
            imports = conn.execute("SELECT count(*) FROM imports").fetchone()[0]
        finally:
            conn.close()
        assert (stored, imports) in ((0, 0), (n_questions, len(files)))  # never part of the files
        outcomes.append(stored)
    assert outcomes[:3].count(0) >= 2  # the kills really fell inside the transaction
    assert outcomes[3] == n_questions  # the unkilled run imported everything
