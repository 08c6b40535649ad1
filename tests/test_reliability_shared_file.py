"""The database shared with other programs: an open window never loses an edit because
another program opened the same file.

POSIX advisory locks belong to a process and a file: closing ANY descriptor of the
database file drops every lock the process holds on it, SQLite's included ("How To
Corrupt An SQLite Database File", section 2.2).  When MCQ Lens opened the file with
`open()` to read its header while the window's connection was open, the next program to
close its connection believed it was the last one, checkpointed the WAL and removed it
under the window: every later edit said "saved" but went into an unlinked file, and a
crash lost it.

Each check here is the loss as it happened: process A holds a store connection (the
window), opens and closes a second one in the same process (what the window's report,
agreement, scoring and refresh do), another program runs a command on the same file,
A saves an edit, A is killed with SIGKILL, and a fresh process reads the edit from the
file.  A also lists its own /proc/self/fd after the other program ran: no `-wal` or
`-shm` may be "(deleted)" under it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from desktop import formats
from desktop.domain.changes import Change
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
RACE_FILE = DATA / "race" / "dev" / "high" / "10024.txt"
TINY = Path(os.environ.get("MCQLENS_TEST_MODEL", ROOT / "tests" / "data" / "tiny_model"))

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")

# Process A, the window: a store connection kept open, a second one opened and closed in
# the same process, then (after the other program ran) its view of its own descriptors and
# one more edit; it is killed before it could close anything.
HOLDER = r'''
import json, os, sys
from desktop.domain.changes import Change
from desktop.store import Store

db, how = sys.argv[1], sys.argv[2]
store = Store.open(db, annotator="anna")
store.apply(Change("0_0", "note", "anna before"))
if how == "second-connection":
    Store.open(db, annotator="anna").close()
elif how == "file-dialog":
    # the window's Import/Merge/Export/Report dialogs open in the database's folder, the
    # user clicks on the database and its side files, then cancels
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QFileDialog
    from desktop.ui.dialogs import dialog_kit
    app = QApplication([])
    folder = os.path.dirname(os.path.abspath(db))
    def click(names, then):
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QFileDialog):
            for name in names:
                dialog.selectFile(os.path.join(folder, name))
        QTimer.singleShot(700, then)
    def close():
        dialog = QApplication.activeModalWidget()
        if dialog is not None:
            dialog.reject()
    base = os.path.basename(db)
    QTimer.singleShot(1500, lambda: click([base, base + "-wal", base + "-shm"], close))
    for mode in (dialog_kit.OPEN_FILE, dialog_kit.SAVE_FILE):
        dialog_kit.system_path_chooser(None, "Import", mode, folder, "All files (*)")
        QTimer.singleShot(1500, lambda: click([base + "-wal"], close))
print("ready", flush=True)
sys.stdin.readline()
gone = []
for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue
    if target.endswith(" (deleted)"):
        gone.append(target)
print(json.dumps(gone), flush=True)
hid = store.apply(Change("0_0", "comment", "anna after"))
print(f"saved {hid}", flush=True)
sys.stdin.readline()
'''

# Another window on the same database in another process: its own store, an edit, a second
# connection opened and closed, then the window is closed.
OTHER_WINDOW = r'''
import sys
from desktop.domain.changes import Change
from desktop.store import Store

with Store.open(sys.argv[1], annotator="bob") as store:
    store.apply(Change("0_1", "comment", "bob in the other window"))
    Store.open(sys.argv[1], annotator="bob").close()
'''


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Three EMBRACE passages (7 items), two annotators, closed: what a user keeps."""
    folder = tmp_path_factory.mktemp("base")
    part = folder / "green_part.jsonl"
    part.write_text("".join(GREEN.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")
    db = folder / "annotations.db"
    with Store.open(db, annotator="imported") as s:
        s.import_datasets(formats.read(part), file=str(part))
        for who in ("anna", "bob"):
            s.apply(Change("0_0", "difficulty.ni", "2" if who == "anna" else "1", who))
            s.apply(Change("0_0", "status", "done", who))
    other = folder / "colleague.db"
    shutil.copyfile(db, other)
    with Store.open(other, annotator="carla") as s:
        s.apply(Change("0_0", "comment", "carla's remark"))
    return folder


def _commands(db: Path, base: Path, out: Path) -> dict[str, tuple[list[str], str | None]]:
    return {
        "stats": (["stats", "--db", str(db)], None),
        "export": (["export", "embrace", "--db", str(db), "-o", str(out / "out.jsonl")], None),
        "annotate": (["annotate", "--db", str(db), "--annotator", "carla"],
                     '{"item": "0_1", "field": "comment", "value": "carla from a script"}\n'),
        "import": (["import", str(RACE_FILE), "--db", str(db)], None),
        "merge": (["merge", str(base / "colleague.db"), "--db", str(db)], None),
        "score": (["score", "--db", str(db), "--model", str(TINY), "--no-progress"], None),
        "report": (["report", "--db", str(db), "-o", str(out / "report")], None),
        "agreement": (["agreement", "--db", str(db), "-o", str(out / "agreement")], None),
    }


def _comments_in_a_fresh_process(db: Path) -> tuple[list[tuple[str, str]], str]:
    """(annotator, text) of every comment and note, and integrity_check, read by another process."""
    code = ("import json, sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1])\n"
            "rows = c.execute('SELECT annotator, text FROM comments UNION ALL '\n"
            "                 'SELECT annotator, text FROM notes').fetchall()\n"
            "print(json.dumps([rows, c.execute('PRAGMA integrity_check').fetchone()[0]]))\n")
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=60, check=True)
    rows, integrity = json.loads(out.stdout)
    return [tuple(r) for r in rows], integrity


def _window_beside(db: Path, how: str, other: list[str], stdin: str | None = None) -> list[str]:
    """Run `other` (a command line) while process A holds the database; returns A's deleted
    descriptors.  A is killed with SIGKILL after its last edit was acknowledged."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), how], cwd=ROOT, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert holder.stdout.readline().strip() == "ready"
        ran = subprocess.run(other, cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, (other, ran.stderr[-2000:])
        holder.stdin.write("\n")
        holder.stdin.flush()
        gone = json.loads(holder.stdout.readline())
        assert holder.stdout.readline().startswith("saved ")  # acknowledged, as the window says "✓ Saved"
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    return gone


def _fresh_copy(base: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir()
    shutil.copyfile(base / "annotations.db", folder / "annotations.db")
    return folder / "annotations.db"


@pytest.mark.parametrize("command", ["stats", "export", "annotate", "import", "merge", "score", "report",
                                     "agreement"])
def test_a_command_beside_an_open_window_loses_nothing(base, tmp_path, command):
    db = _fresh_copy(base, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    args, stdin = _commands(db, base, out)[command]
    gone = _window_beside(db, "second-connection", [sys.executable, "-m", "desktop.cli", *args], stdin)
    comments, integrity = _comments_in_a_fresh_process(db)
    assert integrity == "ok"
    assert ("anna", "anna before") in comments and ("anna", "anna after") in comments, comments
    assert not [g for g in gone if "annotations.db" in g], f"the WAL was removed under the window: {gone}"
    assert not Path(f"{db}-journal").exists()


def test_two_windows_on_one_database_lose_nothing(base, tmp_path):
    db = _fresh_copy(base, tmp_path)
    gone = _window_beside(db, "second-connection", [sys.executable, "-c", OTHER_WINDOW, str(db)])
    comments, integrity = _comments_in_a_fresh_process(db)
    assert integrity == "ok"
    assert {("anna", "anna before"), ("anna", "anna after"), ("bob", "bob in the other window")} <= set(comments)
    assert not [g for g in gone if "annotations.db" in g], gone


def test_the_file_dialogs_do_not_open_the_database(base, tmp_path):
    """Qt's file dialog reads files to guess their type (QMimeDatabase): browsing the
    database's folder in File → Import… opened and closed the database and its -wal/-shm."""
    db = _fresh_copy(base, tmp_path)
    gone = _window_beside(db, "file-dialog", [sys.executable, "-m", "desktop.cli", "stats", "--db", str(db)])
    comments, integrity = _comments_in_a_fresh_process(db)
    assert integrity == "ok" and ("anna", "anna after") in comments, comments
    assert not [g for g in gone if "annotations.db" in g], gone


# ---------------------------------------------------------------- no descriptor outside SQLite, in-process

_WATCH: dict[str, list] = {"paths": [], "opened": []}


def _audit(event: str, args) -> None:
    if event == "open" and _WATCH["paths"] and args and isinstance(args[0], (str, bytes, os.PathLike)):
        try:
            path = os.path.realpath(os.fsdecode(args[0]))
        except (TypeError, ValueError):
            return
        if path in _WATCH["paths"]:
            _WATCH["opened"].append(path)


sys.addaudithook(_audit)


def test_no_command_opens_the_database_outside_sqlite_while_a_store_is_open(base, tmp_path, capsys, monkeypatch):
    """Every command, run in this process beside an open store, opens the database file and
    its -wal/-shm/-journal only through SQLite (Python's audit hook sees every `open`)."""
    from desktop.cli import main
    from desktop.store import imports

    monkeypatch.setenv("MCQLENS_SETTINGS", str(tmp_path / "settings.ini"))
    db = _fresh_copy(base, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    _WATCH["paths"] = [os.path.realpath(f"{db}{s}") for s in ("", "-wal", "-shm", "-journal")]
    _WATCH["opened"] = []
    try:
        with Store.open(db, annotator="anna") as window:
            window.apply(Change("0_0", "comment", "anna"))
            for name, (args, stdin) in _commands(db, base, out).items():
                if stdin is not None:
                    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(stdin))
                assert main(args) == 0, (name, capsys.readouterr().err)
                assert _WATCH["opened"] == [], (name, _WATCH["opened"])
            # a folder that holds the database, fingerprinted for "already imported"
            shutil.copyfile(RACE_FILE, db.parent / RACE_FILE.name)
            assert imports.file_sha256(db.parent, window.path) is not None
            assert _WATCH["opened"] == []
            # the database's own files picked by mistake in File → Import… or Merge…: refused
            # before a byte is read (the window's code: Backend and merge_file)
            from desktop.app.merge import merge_file
            from desktop.domain.errors import McqLensError
            from desktop.ui.backend import Backend
            for side in ("", "-wal", "-shm"):
                with pytest.raises(McqLensError, match="database|into itself"):
                    Backend(window).refuse_own_file(f"{db}{side}")
                with pytest.raises(McqLensError, match="database|into itself"):
                    merge_file(window, f"{db}{side}")
                assert main(["import", f"{db}{side}", "--db", str(db)]) == 2
                assert "side files" in capsys.readouterr().err
            assert _WATCH["opened"] == []
            window.apply(Change("0_0", "comment", "anna, still saved"))
    finally:
        _WATCH["paths"] = []
    capsys.readouterr()
    conn = sqlite3.connect(db)
    try:
        assert ("anna, still saved",) in conn.execute("SELECT text FROM comments WHERE annotator='anna'").fetchall()
    finally:
        conn.close()


def test_an_export_never_replaces_the_database_it_reads(base, tmp_path, capsys):
    from desktop.cli import main

    db = _fresh_copy(base, tmp_path)
    with Store.open(db, annotator="anna") as window:  # open, so its -wal and -shm exist
        window.apply(Change("0_0", "comment", "anna"))
        before = _comments_in_a_fresh_process(db)
        for side in ("", "-wal", "-shm"):
            for kind in ("embrace", "csv", "predictions"):
                assert main(["export", kind, "--db", str(db), "-o", f"{db}{side}", "--force"]) == 2, (kind, side)
                assert "it is the database being exported" in capsys.readouterr().err
        window.apply(Change("0_0", "comment", "anna, after"))
    comments, integrity = _comments_in_a_fresh_process(db)
    assert integrity == "ok" and ("anna", "anna, after") in comments and before[1] == "ok"
