"""The File menu: new and open databases (and the recent ones), import, export, merging
a colleague's work, the demo items, quit.

Opening another database opens a new window on it and closes this one, so nothing of
the old database (its watcher, model worker, caches) lingers.  Export and merge call
the same functions as `mcqlens export` and `mcqlens merge` (desktop/commands/).
Reading an import happens in a worker thread; storing it on the GUI thread.  A mixin
of `MainWindow`.
"""
from __future__ import annotations

import os
import time

from PySide6.QtCore import QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QProgressDialog

from desktop.domain.errors import McqLensError
from desktop.domain.words import count
from desktop.ui.backend import read_file
from desktop.ui.dialogs.dialog_kit import FOLDER, OPEN_FILE, SAVE_FILE

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
    def _build_file_menu(self, action) -> None:
        menu = self.menuBar().addMenu("&File")
        self.file_menu = menu
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
        action(menu, "&Quit", self.close, [QKeySequence.Quit])

    # ================================================================ databases
    def database_name(self) -> str:
        path = self.backend.path
        return "in-memory database" if path in (None, "", ":memory:") else os.path.basename(path)

    def database_where(self) -> str:
        path = self.backend.path
        return path if path in (None, "", ":memory:") else os.path.abspath(path)

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        here = self.database_where()
        paths = [p for p in recent_databases(self.settings) if os.path.abspath(p) != here]
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
            path = self.path_chooser(self, "New database", SAVE_FILE, os.path.join(os.getcwd(), "annotations.db"),
                                     DATABASE_FILTER)
            if not path:
                return None
        if os.path.exists(path):
            self._error(f"{path} exists already; open it with File → Open database…, or choose a new name.")
            return None
        return self.open_database(path, create=True)

    def open_database(self, path: str | None = None, create: bool = False):
        """Open the database at `path` in a new window that takes this one's place; returns it."""
        if path is None:
            start = os.path.dirname(self.database_where()) if self.backend.path != ":memory:" else os.getcwd()
            path = self.path_chooser(self, "Open database", OPEN_FILE, start, DATABASE_FILTER)
            if not path:
                return None
        path = os.path.abspath(path)
        if path == self.database_where():
            return self
        from desktop.store import Store
        from desktop.ui.backend import Backend
        try:
            backend = Backend(Store.open(path, annotator=self.backend.annotator, create=create))
        except McqLensError as exc:
            self._error(f"Cannot open {path}: {exc}")
            return None
        remember_database(self.settings, self.database_where())  # the list offers the way back
        remember_database(self.settings, path)
        self.flush()
        window = type(self)(backend, settings=self.settings, facts=self._want_facts)
        window.owns_backend = True
        window.resize(self.size())
        window.move(self.pos())
        window.show()
        self.replaced_by = window
        self.close()
        window.tell(f"Opened {path}")
        return window

    # ================================================================ export, merge
    def show_export_dialog(self):
        from desktop.ui.dialogs.export import ExportDialog

        self.flush()
        dialog = ExportDialog(self)
        dialog.open()
        self.export_dialog = dialog
        return dialog

    def show_merge_dialog(self):
        from desktop.ui.dialogs.merge import MergeDialog

        self.flush()
        dialog = MergeDialog(self)
        dialog.merged.connect(lambda: self.reload_items(select=self.current))
        dialog.open()
        self.merge_dialog = dialog
        return dialog

    # ================================================================ import
    def choose_import(self, folder: bool = False) -> None:
        start = str(self.settings.value("last_import_dir", "")) if self.settings is not None else ""
        if folder:  # RACE ships as folders of one .txt per passage
            path = self.path_chooser(self, "Import a folder of RACE files", FOLDER, start, "")
        else:
            path = self.path_chooser(self, "Import items (RACE, EMBRACE, ExpMRC, …)", OPEN_FILE, start,
                                     IMPORT_FILTER)
        if path:
            if self.settings is not None:
                self.settings.setValue("last_import_dir", path if folder else os.path.dirname(path))
            self.import_file(path)

    def import_file(self, path: str) -> None:
        """Read `path` in a worker thread, then store it here on the GUI thread."""
        if self.importing:
            return
        try:
            self.backend.refuse_own_file(path)
        except McqLensError as exc:
            self._error(f"Import failed — {exc}", title="Import failed")
            return
        self.flush()
        self.importing = True
        self._import_path = path
        self._import_started = time.perf_counter()
        self._progress = QProgressDialog(f"Reading {path}…", "Cancel", 0, PROGRESS_STEPS, self)
        self._progress.setAutoReset(False)  # full bar while storing; closed by _import_done
        self._progress.setAutoClose(False)
        self._progress.setWindowTitle("Import")
        self._progress.setMinimumDuration(0)
        self._progress.canceled.connect(self._import_cancel)
        self.welcome_busy(f"Importing {os.path.basename(path)}…")
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
            result = self.backend.import_datasets(datasets, self._import_path)
        except McqLensError as exc:
            self._import_failed(exc)
            return
        self._import_done(result.summary())
        self.reload_items(select=self.current)

    def _import_failed(self, exc) -> None:
        message = str(exc) if isinstance(exc, McqLensError) else f"{type(exc).__name__}: {exc}"
        self._import_done(None)
        self._error(f"Import failed — {message}", title="Import failed")

    def _import_done(self, message: str | None) -> None:
        self.importing = False
        self.welcome_busy(None)
        if self._progress is not None:
            self._progress.canceled.disconnect(self._import_cancel)
            self._progress.close()
            self._progress = None
            self.activateWindow()
        if message:
            self._info(message)

    def load_demo(self) -> None:
        from desktop.ui.menus.demo_data import demo_dataset
        try:
            result = self.backend.import_datasets([demo_dataset()], None)
        except McqLensError as exc:
            self._error(str(exc))
            return
        self._info(result.summary().replace("datasets:", "demo items:"))
        self.reload_items()
