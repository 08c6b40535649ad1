"""The File menu: new and open databases (and the recent ones), import, export, merging
a colleague's work, the demo items, quit.

Opening another database opens a new window on it and closes this one, so nothing of
the old database (its watcher, model worker, caches) lingers.  Export and merge call
the same functions as `mcqlens export` and `mcqlens merge` (desktop/commands/).
Reading an import happens in a worker thread; storing it on the GUI thread.

`FileMenu` is a part of the window (`window.file_menu`).  What it uses of the window: its
database (`backend`, `database_where`), `settings`, `path_chooser`, `flush`, `reload_items`,
`current`, `importing` (which the model's thread reads too), `welcome`, `tell` and `error`;
and the window's class, to open another database in a new window.
"""
from __future__ import annotations

import os
import time
from functools import partial

from PySide6.QtCore import QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QProgressDialog

from desktop.domain.errors import McqLensError
from desktop.domain.words import count
from desktop.app.imports import read_file
from desktop.ui.dialogs.dialog_kit import FOLDER, OPEN_FILE, SAVE_FILE
from desktop.ui.kit.read_only import read_only_notice
from desktop.ui.kit.workers import Runner
from desktop.ui.menus.actions import menu_action
from desktop.ui.menus.demo_data import demo_dataset

PROGRESS_STEPS = 1000  # the import bar's resolution
IMPORT_FILTER = "Item files (*.json *.jsonl *.txt *.xml *.csv);;All files (*)"
DATABASE_FILTER = "MCQ Lens databases (*.db *.sqlite *.sqlite3);;All files (*)"
RECENT_KEY = "recent_databases"
RECENT_MAX = 8


def recent_databases(settings: QSettings | None) -> list[str]:
    """The databases opened last, newest first, those that still exist."""
    if settings is None:
        return []
    value = settings.value(RECENT_KEY, [])
    paths = [value] if isinstance(value, str) else list(value or [])
    return [p for p in paths if p and os.path.isfile(p)]


def remember_database(settings: QSettings | None, path: str) -> None:
    if settings is None or not path or path == ":memory:":
        return
    path = os.path.abspath(path)
    paths = [path] + [p for p in recent_databases(settings) if os.path.abspath(p) != path]
    settings.setValue(RECENT_KEY, paths[:RECENT_MAX])
    settings.sync()


class FileMenu:
    def __init__(self, window):
        self.window = window
        self.export_dialog = self.merge_dialog = None  # the last ones opened (tests look at them)
        self._progress: QProgressDialog | None = None
        # reads the file in a worker; what it read is stored on the GUI thread (_import_read)
        self.import_runner = Runner(window)
        self.import_runner.progressed.connect(self._import_progress)
        self.import_runner.advanced.connect(self._import_advanced)
        self.import_runner.finished.connect(self._import_read)
        self.import_runner.failed.connect(self._import_failed)

    def build(self) -> None:
        """The File menu, placed next in the menu bar."""
        action = partial(menu_action, self.window)
        menu = self.window.menuBar().addMenu("&File")
        self.menu = menu
        self.new_database_action = action(menu, "&New database…", lambda: self.new_database(), [QKeySequence.New])
        self.open_database_action = action(menu, "Open &database…", lambda: self.open_database(),
                                           ["Ctrl+Shift+O"])
        self.recent_menu = menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self._fill_recent_menu()
        menu.addSeparator()
        action(menu, "&Import…", lambda: self.choose_import(), [QKeySequence.Open])
        action(menu, "Import a &folder…", lambda: self.choose_import(folder=True))
        action(menu, "Load the &demo items", self.load_demo)
        menu.addSeparator()
        self.export_action = action(menu, "&Export…", self.show_export_dialog, ["Ctrl+E"])
        self.merge_action = action(menu, "&Merge a colleague's work…", self.show_merge_dialog)
        menu.addSeparator()
        action(menu, "&Quit", self.window.close, [QKeySequence.Quit])

    # ================================================================ databases
    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        here = self.window.database_where()
        paths = [p for p in recent_databases(self.window.settings) if os.path.abspath(p) != here]
        for path in paths:
            a = self.recent_menu.addAction(f"{os.path.basename(path)} — {os.path.dirname(path)}")
            a.setToolTip(path)
            a.setData(path)
            a.triggered.connect(lambda _=False, p=path: self.open_database(p))
        if not paths:
            none = self.recent_menu.addAction("No other database opened yet")
            none.setEnabled(False)

    def new_database(self, path: str | None = None):
        """Create an empty database at `path` (asked for when not given) and open it."""
        if path is None:
            path = self.window.path_chooser(self.window, "New database", SAVE_FILE,
                                            os.path.join(os.getcwd(), "annotations.db"), DATABASE_FILTER)
            if not path:
                return None
        if os.path.exists(path):
            self.window.error(f"{path} exists already; open it with File → Open database…, or choose a new name.")
            return None
        return self.open_database(path, create=True)

    def open_database(self, path: str | None = None, create: bool = False):
        """Open the database at `path` in a new window that takes this one's place; returns it."""
        if path is None:
            here = self.window.database_where()
            start = os.path.dirname(here) if self.window.backend.path != ":memory:" else os.getcwd()
            path = self.window.path_chooser(self.window, "Open database", OPEN_FILE, start, DATABASE_FILTER)
            if not path:
                return None
        path = os.path.abspath(path)
        if path == self.window.database_where():
            return self.window
        from desktop.ui.backend import Backend
        w = self.window
        try:  # the door the first window came through: a file that cannot be written opens for reading
            backend = Backend.open(path, annotator=w.backend.annotator, create=create,
                                   allow_network=w.backend.allow_network)
        except McqLensError as exc:
            self.window.error(f"Cannot open {path}: {exc}")
            return None
        remember_database(self.window.settings, self.window.database_where())  # the list offers the way back
        remember_database(self.window.settings, path)
        self.window.flush()
        window = type(self.window)(backend, settings=self.window.settings, facts=self.window.want_facts,
                                   model_dir=self.window.model_menu.model_dir())
        window.owns_backend = True
        if backend.read_only:
            read_only_notice(window, backend.read_only_reason)
        window.resize(self.window.size())
        window.move(self.window.pos())
        window.show()
        self.window.replaced_by = window
        self.window.close()
        window.tell(f"Opened {path}")
        return window

    # ================================================================ export, merge
    def show_export_dialog(self):
        from desktop.ui.dialogs.export import ExportDialog

        self.window.flush()
        dialog = ExportDialog(self.window)
        dialog.open()
        self.export_dialog = dialog
        return dialog

    def show_merge_dialog(self):
        from desktop.ui.dialogs.merge import MergeDialog

        self.window.flush()
        dialog = MergeDialog(self.window)
        dialog.merged.connect(lambda: self.window.reload_items(select=self.window.current))
        dialog.open()
        self.merge_dialog = dialog
        return dialog

    # ================================================================ import
    def choose_import(self, folder: bool = False) -> None:
        start = str(self.window.settings.value("last_import_dir", "")) if self.window.settings is not None else ""
        if folder:  # RACE ships as folders of one .txt per passage
            path = self.window.path_chooser(self.window, "Import a folder of RACE files", FOLDER, start, "")
        else:
            path = self.window.path_chooser(self.window, "Import items (RACE, EMBRACE, ExpMRC, …)", OPEN_FILE,
                                            start, IMPORT_FILTER)
        if path:
            if self.window.settings is not None:
                self.window.settings.setValue("last_import_dir", path if folder else os.path.dirname(path))
            self.import_file(path)

    def import_file(self, path: str) -> None:
        """Read `path` in a worker thread, then store it here on the GUI thread."""
        if self.window.importing:
            return
        try:
            self.window.backend.refuse_own_file(path)
        except McqLensError as exc:
            self.window.error(f"Import failed — {exc}", title="Import failed")
            return
        self.window.flush()
        self.window.importing = True
        self._import_path = path
        self._import_started = time.perf_counter()
        self._progress = QProgressDialog(f"Reading {path}…", "Cancel", 0, PROGRESS_STEPS, self.window)
        self._progress.setAutoReset(False)  # full bar while storing; closed by _import_done
        self._progress.setAutoClose(False)
        self._progress.setWindowTitle("Import")
        self._progress.setMinimumDuration(0)
        self._progress.canceled.connect(self._import_cancel)
        self.window.welcome.busy(f"Importing {os.path.basename(path)}…")
        self._progress.show()
        self.import_runner.start(read_file, path)

    def _import_progress(self, text: str) -> None:
        if self._progress is not None:
            self._progress.setLabelText(text)

    def _import_advanced(self, done: float, total: int, records: int) -> None:
        """Files read of the files to read (fractional within a JSON-lines file), records read."""
        if self._progress is None:
            return
        self._progress.setValue(int(PROGRESS_STEPS * min(done / max(total, 1), 1.0)))
        where = f"file {min(int(done) + 1, total)} of {total}" if total > 1 else os.path.basename(self._import_path)
        self._progress.setLabelText(f"Reading {where}: {records} records read" if records else f"Reading {where}…")

    def _import_cancel(self) -> None:
        self.import_runner.cancel()
        self._import_done("Import cancelled; nothing was stored.")

    def _import_read(self, datasets) -> None:
        if self._progress is not None:
            n = sum(1 for d in datasets for _ in d.questions())
            self._progress.setValue(PROGRESS_STEPS)
            self._progress.setLabelText(f"Storing {count(n, 'question')}…")
            self._progress.setCancelButton(None)  # one transaction on this thread: nothing to stop midway
            from PySide6.QtWidgets import QApplication
            QApplication.processEvents()
        try:
            result = self.window.backend.import_datasets(datasets, self._import_path)
        except McqLensError as exc:
            self._import_failed(exc)
            return
        self._import_done(result.summary())
        self.window.reload_items(select=self.window.current)

    def _import_failed(self, exc) -> None:
        message = str(exc) if isinstance(exc, McqLensError) else f"{type(exc).__name__}: {exc}"
        self._import_done(None)
        self.window.error(f"Import failed — {message}", title="Import failed")

    def _import_done(self, message: str | None) -> None:
        self.window.importing = False
        self.window.welcome.busy(None)
        if self._progress is not None:
            self._progress.canceled.disconnect(self._import_cancel)
            self._progress.close()
            self._progress = None
            self.window.activateWindow()
        if message:
            self.window.tell(message)

    def load_demo(self) -> None:
        try:
            result = self.window.backend.import_datasets([demo_dataset()], None)
        except McqLensError as exc:
            self.window.error(str(exc))
            return
        self.window.tell(result.summary().replace("datasets:", "demo items:"))
        self.window.reload_items()
