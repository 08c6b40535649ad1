"""Outputs and inputs at the door: --force replaces only a regular file; an output that
cannot be written is refused BEFORE the work (nothing merged, nothing computed); a pipe
given as input is refused instead of read forever; the other side of a merge is never
touched; a closed pipe on stdout is not a traceback; a screenshot changes nothing."""
from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.domain.changes import Change
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT / ".." / "shared" / "data" / "embrace" / "embrace_green.jsonl"
EXPMRC = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"
V1 = ROOT / "tests" / "data" / "schema_v1" / "annotations_v1.db"
TINY = Path(os.environ.get("MCQLENS_TEST_MODEL", ROOT / "tests" / "data" / "tiny_model"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _counts(db: Path) -> tuple:
    """What a write would change, read without writing."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return tuple(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                     for t in ("history", "predictions", "spans", "comments", "annotators"))
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "db" / "annotations.db"
    path.parent.mkdir()
    shutil.copyfile(V1, path)
    with Store.open(path, annotator="anna") as s:  # the current schema, as a user's file is
        s.apply(Change("0_0", "comment", "ours"))
    Path(f"{path}.bak-v1").unlink()
    return path


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


# ---------------------------------------------------------------- --force never replaces what is not a file

def _not_files(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    out = {"pipe": folder / "pipe.jsonl", "link": folder / "link.jsonl", "folder": folder / "folder.jsonl"}
    os.mkfifo(out["pipe"])
    (folder / "target.txt").write_text("the link's target", encoding="utf-8")
    out["link"].symlink_to(folder / "target.txt")
    out["folder"].mkdir()
    if os.geteuid() == 0:  # a character device like /dev/null, in our own folder
        out["device"] = folder / "null.jsonl"
        os.mknod(out["device"], stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return out


def test_force_never_replaces_a_device_pipe_link_or_folder(db, tmp_path, capsys):
    for kind, target in _not_files(tmp_path / "targets").items():
        mode = target.lstat().st_mode
        for args in (["export", "embrace", "--db", str(db), "-o", str(target), "--force"],
                     ["export", "csv", "--db", str(db), "-o", str(target), "--force"]):
            assert main(args) == 2, kind
            err = _one_error(capsys)
            assert err.startswith(f"error: cannot write {target}: it exists and is ") and "not replaced" in err, err
            assert target.lstat().st_mode == mode, kind
    assert (tmp_path / "targets" / "target.txt").read_text(encoding="utf-8") == "the link's target"


def test_force_replaces_a_folder_export_only_if_it_holds_only_its_txt_files(db, tmp_path, capsys):
    out = tmp_path / "race_out"
    assert main(["export", "race", "--db", str(db), "-o", str(out)]) == 0
    n = len(list(out.rglob("*.txt")))
    assert n == 12
    assert main(["export", "race", "--db", str(db), "-o", str(out), "--force"]) == 0  # a previous export
    capsys.readouterr()
    (out / "thesis.docx").write_text("someone's work", encoding="utf-8")
    assert main(["export", "race", "--db", str(db), "-o", str(out), "--force"]) == 2
    assert "is not an exported .txt file" in _one_error(capsys)
    assert (out / "thesis.docx").read_text(encoding="utf-8") == "someone's work"


# ---------------------------------------------------------------- outputs checked before the work

def test_agreement_and_report_onto_an_existing_file(db, tmp_path, capsys):
    for command in ("agreement", "report"):
        out = tmp_path / f"{command}.txt"
        out.write_text("keep me", encoding="utf-8")
        assert main([command, "--db", str(db), "-o", str(out)]) == 2
        assert _one_error(capsys) == f"error: cannot write into {out}: it exists and is a file, not a folder"
        assert out.read_text(encoding="utf-8") == "keep me"


def test_merge_conflicts_into_a_missing_folder_is_refused_before_merging(db, tmp_path, capsys):
    theirs = tmp_path / "theirs.db"
    shutil.copyfile(V1, theirs)
    with Store.open(theirs, annotator="anna") as s:  # anna's other comment: a conflict
        s.apply(Change("0_0", "comment", "theirs"))
    before = _counts(db)
    missing = tmp_path / "no" / "such" / "conflicts.json"
    assert main(["merge", str(theirs), "--db", str(db), "--conflicts", str(missing)]) == 2
    assert _one_error(capsys) == f"error: cannot write {missing}: folder {missing.parent} does not exist"
    assert _counts(db) == before  # nothing was merged
    ok = tmp_path / "conflicts.json"
    assert main(["merge", str(theirs), "--db", str(db), "--conflicts", str(ok)]) == 0
    assert '"theirs"' in ok.read_text(encoding="utf-8")


def test_merge_dry_run_from_an_old_database_touches_neither_side(db, tmp_path, capsys):
    theirs = tmp_path / "colleague" / "annotations.db"
    theirs.parent.mkdir()
    shutil.copyfile(V1, theirs)  # schema 1: reading it must not upgrade it
    ours_before, theirs_before = (_sha(db), _counts(db)), _sha(theirs)
    assert main(["merge", str(theirs), "--db", str(db), "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("would add ")
    assert _sha(theirs) == theirs_before and sorted(os.listdir(theirs.parent)) == ["annotations.db"]
    assert (_sha(db), _counts(db)) == ours_before
    assert main(["merge", str(theirs), "--db", str(db)]) == 0  # a real merge: still only reads theirs
    assert _sha(theirs) == theirs_before and sorted(os.listdir(theirs.parent)) == ["annotations.db"]


# ---------------------------------------------------------------- a pipe as input is refused, not read forever

def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "desktop.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_a_pipe_given_as_input_is_refused_by_every_command(db, tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for args in (["merge", str(fifo), "--db", str(db)],
                 ["expmrc", "evaluate", str(fifo), str(EXPMRC)],
                 ["expmrc", "evaluate", str(EXPMRC), str(fifo)],
                 ["import", str(fifo), "--db", str(db)]):
        done = _cli(*args)  # a hang would end in TimeoutExpired
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.strip() == f"error: {fifo}: not a regular file (a device, pipe or socket cannot be " \
                                      f"{'imported' if args[0] == 'import' else 'read'})", done.stderr


# ---------------------------------------------------------------- mcqlens stats | head

@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("args", [["stats"], ["stats", "--json"], ["--help"]])
def test_a_closed_pipe_on_stdout_is_not_a_traceback(db, args, unbuffered):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:  # every print meets the closed pipe at once, not at the final flush
        env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "desktop.cli", *args, *(["--db", str(db)] if args[0] == "stats"
                                                                          else [])],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    proc.stdout.close()  # `| head` that has already exited
    err = proc.stderr.read()
    code = proc.wait(timeout=60)
    assert err == "", err
    # 141: as a command ended by SIGPIPE; argparse itself ignores the failed write of --help
    assert code == 141 or (args == ["--help"] and code == 0), code


# ---------------------------------------------------------------- a screenshot changes nothing

@pytest.mark.skipif(not (TINY / "card.json").is_file(), reason="the tiny test model is not built")
def test_screenshot_computes_scores_but_stores_nothing(db, tmp_path, monkeypatch, capsys):
    from desktop.ui.model import review_queue

    shown = []
    real = review_queue.QueueControl._show_unstored

    def spy(self, item_id, preds):
        shown.append((item_id, len(preds)))
        return real(self, item_id, preds)

    monkeypatch.setattr(review_queue.QueueControl, "_show_unstored", spy)
    monkeypatch.setenv("MCQLENS_SETTINGS", str(tmp_path / "settings.ini"))
    for target in (db, tmp_path / "old" / "old.db"):  # the current schema, and an old one read in memory
        if target != db:
            target.parent.mkdir()
            shutil.copyfile(V1, target)
        before = (_sha(target), _counts(target), sorted(os.listdir(target.parent)))
        png = tmp_path / "shots" / f"{target.stem}.png"
        png.parent.mkdir(exist_ok=True)
        model = TINY if target == db else tmp_path / "no_model"  # the model path once is enough
        assert main(["gui", "--db", str(target), "--screenshot", str(png), "--model", str(model),
                     "--annotator", "shooter"]) == 0
        assert png.stat().st_size > 10_000
        assert (_sha(target), _counts(target), sorted(os.listdir(target.parent))) == before
    assert shown and all(n > 0 for _, n in shown)  # the model scored the item: shown, not stored
    missing = tmp_path / "never.db"
    assert main(["gui", "--db", str(missing), "--screenshot", str(tmp_path / "empty.png")]) == 0
    assert not missing.exists()
