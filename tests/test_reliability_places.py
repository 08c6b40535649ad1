"""Read-only places and full disks, for real: a tmpfs mounted read-only, and a small
tmpfs filled to the last byte (root only: mounting needs it; skipped elsewhere).
Reading (stats, export, agreement, the window) works there; writing says
plainly why it cannot.  And eight processes creating one new database at once."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.domain.changes import Change
from desktop.store import SCHEMA_VERSION, Store

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT / ".." / "shared" / "data" / "embrace" / "embrace_green.jsonl"
V1 = ROOT / "tests" / "data" / "schema_v1" / "annotations_v1.db"
EDIT = {"item": "0_1", "field": "comment", "value": "written where it cannot be"}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def green_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("places") / "green.db"
    assert main(["import", str(GREEN), "--db", str(db)]) == 0
    with Store.open(db, annotator="anna") as s:
        s.apply(Change("0_0", "comment", "kept"))
    return db


@contextlib.contextmanager
def _tmpfs(path: Path, size: str):
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _annotate(db: Path, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(EDIT) + "\n"))
    code = main(["annotate", "--db", str(db), "--annotator", "anna"])
    captured = capsys.readouterr()
    return code, (captured.err + captured.out).strip()


def _reads_work(db: Path, out: Path, reference: Path, capsys) -> None:
    assert main(["stats", "--db", str(db)]) == 0
    assert "200" in capsys.readouterr().out
    assert main(["export", "embrace", "--db", str(db), "-o", str(out / "green.jsonl")]) == 0
    assert (out / "green.jsonl").read_bytes() == reference.read_bytes()
    assert main(["export", "csv", "--db", str(db), "-o", str(out / "items.csv")]) == 0
    assert main(["agreement", "--db", str(db), "-o", str(out / "agreement")]) == 0
    capsys.readouterr()


@pytest.fixture(scope="module")
def reference_export(green_db, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "green.jsonl"
    assert main(["export", "embrace", "--db", str(green_db), "-o", str(out)]) == 0
    return out


def test_read_only_mount_reads_and_refuses_writes_plainly(green_db, reference_export, tmp_path, monkeypatch,
                                                          capsys, qtbot):
    out = tmp_path / "out"
    out.mkdir()
    with _tmpfs(tmp_path / "mnt", "32m") as mnt:
        db, old = mnt / "annotations.db", mnt / "old.db"
        shutil.copyfile(green_db, db)
        shutil.copyfile(V1, old)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        assert not os.access(mnt, os.W_OK)
        before = (_sha(db), _sha(old), sorted(os.listdir(mnt)))
        _reads_work(db, out, reference_export, capsys)
        # an old schema on a read-only mount: read through an upgraded copy in memory
        assert main(["stats", "--db", str(old)]) == 0
        assert "read through an upgraded copy in memory" in capsys.readouterr().out
        for target in (db, old):
            code, said = _annotate(target, monkeypatch, capsys)
            assert code == 2 and said == f"error: read-only: cannot save changes to {target} (read-only file system)"
            assert main(["import", str(GREEN), "--db", str(target)]) == 2
            assert capsys.readouterr().err.strip().startswith("error: read-only: cannot save changes to ")
        # the window opens for reading and says so; an edit is refused with the reason
        from desktop.ui.app import read_only_notice
        from desktop.ui.backend import Backend
        from desktop.ui.main_window import MainWindow
        monkeypatch.setenv("MCQLENS_MODEL", str(tmp_path / "no_model"))  # the model panel is not under test
        backend = Backend.open(str(db), annotator="anna")
        assert backend.read_only and backend.read_only_reason.startswith("read-only:")
        window = MainWindow(backend, facts=False)
        qtbot.addWidget(window)
        text = read_only_notice(window, backend.read_only_reason)
        assert text.startswith("read-only: opened for reading") and window.banner.text == text
        assert window.go_to("0_1")
        assert window.edit("comment", "typed on a read-only mount") is None
        assert window.last_error.startswith("Not saved: read-only: opened for reading")
        assert window.state.question.comments == []
        window.close()
        backend.close()
        assert (_sha(db), _sha(old), sorted(os.listdir(mnt))) == before


def test_full_disk_reads_and_says_nothing_was_saved(green_db, reference_export, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    out.mkdir()
    size = green_db.stat().st_size
    with _tmpfs(tmp_path / "mnt", f"{size // 1024 + 512}k") as mnt:
        db = mnt / "annotations.db"
        shutil.copyfile(green_db, db)
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:  # fill the file system to the last byte
            for chunk in (1 << 16, 4096, 1):
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * chunk)
        finally:
            os.close(fd)
        assert os.statvfs(mnt).f_bavail == 0
        before = _sha(db)
        _reads_work(db, out, reference_export, capsys)
        code, said = _annotate(db, monkeypatch, capsys)
        assert code == 2 and said == f"error: disk full: nothing was saved in {db}", said
        # an export onto the full disk: the real ENOSPC, nothing half-written
        assert main(["export", "embrace", "--db", str(db), "-o", str(mnt / "green.jsonl")]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"error: cannot write {mnt / 'green.jsonl'}: No space left on device; nothing was written"
        assert not [p for p in os.listdir(mnt) if p.startswith((".green", "green"))]
        from desktop.ui.backend import Backend
        backend = Backend.open(str(db), annotator="anna")
        assert backend.read_only and backend.read_only_reason.startswith("disk full: nothing was saved")
        assert backend.load("0_0").own_comments == ["kept"]
        backend.close()
        assert _sha(db) == before
        filler.unlink()  # space again: the same edit goes through
        code, said = _annotate(db, monkeypatch, capsys)
        assert code == 0 and said.startswith("ok "), said
        with Store.open(db, read_only=True) as s:
            assert s.question("0_1", "anna").comments == [EDIT["value"]]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions; the mount test covers root")
def test_read_only_folder_by_permissions(green_db, reference_export, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "annotations.db"
    shutil.copyfile(green_db, db)
    os.chmod(db, 0o444)
    os.chmod(folder, 0o555)
    try:
        out = tmp_path / "out"
        out.mkdir()
        _reads_work(db, out, reference_export, capsys)
        code, said = _annotate(db, monkeypatch, capsys)
        assert code == 2 and said.startswith("error: read-only: cannot save changes to "), said
        assert sorted(os.listdir(folder)) == ["annotations.db"]
    finally:
        os.chmod(folder, 0o755)
        os.chmod(db, 0o644)


# everything imported first, then all start within a millisecond or two of each other
# (before the fix, 1 to 3 of 8 such processes failed on "table annotators already exists")
_OPEN_AT_ONCE = """
import os, sys, time
from pathlib import Path
from desktop.cli import main
from desktop import formats
from desktop.commands import import_
from desktop.store import Store
go = Path(sys.argv[1])
(go.parent / f"ready-{os.getpid()}").touch()
while not go.exists():
    time.sleep(0.001)
sys.exit(main(sys.argv[2:]))
"""


def _ready(folder: Path, n: int) -> None:
    """Wait until n processes have imported everything and wait for the signal."""
    end = time.monotonic() + 120
    while len(list(folder.glob("ready-*"))) < n and time.monotonic() < end:
        time.sleep(0.01)


def _at_once(tmp_path: Path, argv: list[str], n: int) -> list[subprocess.CompletedProcess]:
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_AT_ONCE, str(go), *argv], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    _ready(tmp_path, n)
    go.write_text("go")
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def test_eight_processes_create_one_new_database_at_once(tmp_path):
    small = tmp_path / "green_first3.jsonl"
    small.write_text("".join(GREEN.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")
    db = tmp_path / "db" / "annotations.db"
    db.parent.mkdir()
    done = _at_once(tmp_path, ["import", str(small), "--db", str(db)], 8)
    assert [d.returncode for d in done] == [0] * 8, [d.stderr for d in done]
    assert all(d.stderr == "" for d in done)
    assert sum("added 3 passages" in d.stdout for d in done) == 1  # the others found it imported
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM datasets").fetchone()[0] == 1
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    conn.close()
    assert sorted(p.name for p in db.parent.iterdir() if not p.name.endswith(("-wal", "-shm"))) == ["annotations.db"]


def test_four_processes_upgrading_one_old_database_at_once(tmp_path):
    db = tmp_path / "db" / "annotations.db"
    db.parent.mkdir()
    shutil.copyfile(V1, db)
    edit = json.dumps({"item": "0_1", "field": "status", "value": "done"})
    script = _OPEN_AT_ONCE.replace("sys.exit(main(sys.argv[2:]))",
                                   "import io; sys.stdin = io.StringIO(" + repr(edit + "\n") + ")\n"
                                   "sys.exit(main(sys.argv[2:]))")
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(go), "annotate", "--db", str(db),
                               "--annotator", f"p{i}"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for i in range(4)]
    _ready(tmp_path, 4)
    go.write_text("go")
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert [r[2] for r in results] == [0] * 4, results
    backup = Path(f"{db}.bak-v1")
    conn = sqlite3.connect(backup)
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == 1  # a true v1 copy
    conn.close()
    with Store.open(db, read_only=True) as s:
        assert s.stats()["schema_version"] == SCHEMA_VERSION
        assert sorted(h.annotator for h in s.history() if h.annotator.startswith("p")) == ["p0", "p1", "p2", "p3"]
