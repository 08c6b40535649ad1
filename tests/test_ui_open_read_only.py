"""File → Open on a database that cannot be written: the new window reads it and says so (banner,
status bar, title), as the first window does (`desktop.ui.app.read_only_notice`), and an edit
is refused with the reason; the file is left as it was.  And a database on a network share
(a mount table as /proc/self/mountinfo writes it) opens the same way unless the user insists.

A read-only place for real: a copy of a real database in a folder and file without write
permission, or, for root (whom permissions do not stop), on a tmpfs remounted read-only.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402

from desktop import formats  # noqa: E402
from desktop.domain.changes import Change  # noqa: E402
from desktop.store import Store, network_fs  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


@pytest.fixture(autouse=True)
def no_model_panel_model(monkeypatch, tmp_path):
    """The model panel loads no model (not under test)."""
    monkeypatch.setenv("MCQLENS_MODEL", str(tmp_path / "no-model"))


@pytest.fixture(scope="module")
def green_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("green") / "green.db"
    with Store.open(db, annotator="anna") as s:
        s.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
        s.apply(Change("0_0", "comment", "kept"))
    return db


def _consistent_copy(source: Path, target: Path) -> None:
    with Store.open(source, read_only=True) as s:  # WAL content included, one file
        s._c.backup(str(target))


@contextlib.contextmanager
def _read_only_place(tmp_path: Path, source: Path):
    """A copy of `source` where nobody may write: permissions, or a read-only mount for root."""
    folder = tmp_path / "ro"
    if os.geteuid() != 0:
        folder.mkdir()
        db = folder / "annotations.db"
        _consistent_copy(source, db)
        os.chmod(db, 0o444)
        os.chmod(folder, 0o555)
        try:
            yield db
        finally:
            os.chmod(folder, 0o755)
            os.chmod(db, 0o644)
        return
    if not shutil.which("mount"):
        pytest.skip("root, and no mount to make a read-only place with")
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        db = folder / "annotations.db"
        _consistent_copy(source, db)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        assert not os.access(folder, os.W_OK)
        yield db
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _first_window(qtbot, tmp_path: Path, settings) -> MainWindow:
    window = MainWindow(Backend.open(str(tmp_path / "first.db"), annotator="anna"), settings=settings, facts=False)
    window.owns_backend = True
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def _opened(qtbot, window: MainWindow, path: Path) -> MainWindow:
    window.path_chooser = lambda parent, title, mode, start, name_filter: str(path)
    window.file_menu.open_database_action.trigger()  # File → Open database…
    new = window.replaced_by
    assert new is not None and new is not window
    qtbot.addWidget(new)
    qtbot.waitExposed(new)
    return new


def test_file_open_on_a_read_only_database_shows_it_read_only(qtbot, tmp_path, settings, green_db):
    window = _first_window(qtbot, tmp_path, settings)
    assert not window.backend.read_only and "(read-only)" not in window.windowTitle()
    with _read_only_place(tmp_path, green_db) as db:
        before = (hashlib.sha256(db.read_bytes()).hexdigest(), sorted(os.listdir(db.parent)))
        window = _opened(qtbot, window, db)
        assert window.backend.read_only and window.backend.read_only_reason.startswith("read-only: ")
        text = window.read_only_text
        assert text.startswith("read-only: opened for reading (read-only: cannot save changes to ")
        assert text.endswith("; edits cannot be saved") and window.banner.text == text
        assert window.windowTitle().startswith("annotations.db") and window.windowTitle().endswith("(read-only)")
        # what it holds is shown; an edit is refused with the reason, and nothing is written
        assert window.go_to("0_0") and window.state.own_comments == ["kept"]
        assert window.go_to("0_1")
        assert window.edit("comment", "typed where it cannot be saved") is None
        assert window.last_error.startswith("Not saved: read-only: opened for reading")
        window.close()
        window.backend.close()
        assert (hashlib.sha256(db.read_bytes()).hexdigest(), sorted(os.listdir(db.parent))) == before


def test_file_open_on_a_network_share_reads_unless_the_user_insists(qtbot, tmp_path, settings, green_db,
                                                                    monkeypatch):
    share = tmp_path / "share"
    share.mkdir()
    db = share / "annotations.db"
    _consistent_copy(green_db, db)
    table = (f"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
             f"99 27 0:77 / {share} rw,relatime - nfs4 server:/export rw,vers=4.2\n")
    monkeypatch.setattr(network_fs, "system_mount_table", lambda: table)  # this system's table, as given
    monkeypatch.delenv(network_fs.ALLOW_ENV, raising=False)
    window = _opened(qtbot, _first_window(qtbot, tmp_path, settings), db)
    assert window.backend.read_only
    assert window.read_only_text.startswith(f"read-only: opened for reading ({db} is on a network file system "
                                            f"(nfs4 at {share})")
    assert window.windowTitle().endswith("(read-only)")
    window.close()
    window.backend.close()
    # `mcqlens gui --allow-network-db`: the window, and the databases opened from it, write
    first = MainWindow(Backend.open(str(tmp_path / "first.db"), annotator="anna", allow_network=True),
                       settings=settings, facts=False)
    first.owns_backend = True
    qtbot.addWidget(first)
    first.show()
    window = _opened(qtbot, first, db)
    assert not window.backend.read_only and "(read-only)" not in window.windowTitle()
    assert window.go_to("0_1") and window.edit("comment", "written on the share, alone") is not None
    window.close()
    window.backend.close()
