"""Starting the workbench: the application object, the annotator's name, the window, a screenshot."""
from __future__ import annotations

import os
import sys

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QInputDialog

from desktop.domain.errors import McqLensError
from desktop.store import default_annotator
from desktop.ui.kit.display import problem
from desktop.ui.kit.read_only import read_only_notice  # noqa: F401 - where tests and callers found it


def settings() -> QSettings:
    """Where the annotator's name and last folder live; MCQLENS_SETTINGS names an ini file instead."""
    path = os.environ.get("MCQLENS_SETTINGS")
    if path:
        return QSettings(path, QSettings.IniFormat)
    return QSettings("MCQ Lens", "mcqlens")


def annotator_name(store_default: str, given: str | None, s: QSettings, ask: bool = True) -> str:
    """The annotator: given on the command line, else remembered, else asked once and remembered."""
    if given:
        s.setValue("annotator", given)
        return given
    remembered = s.value("annotator", "")
    if remembered:
        return str(remembered)
    name = store_default
    if ask:
        text, ok = QInputDialog.getText(None, "MCQ Lens", "Your name, as the author of your annotations:",
                                        text=store_default)
        if ok and text.strip():
            name = text.strip()
    s.setValue("annotator", name)
    s.sync()
    return name


def application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("MCQ Lens")
        app.setOrganizationName("MCQ Lens")
        use_palette(app, os.environ.get("MCQLENS_PALETTE", ""))
        from desktop.ui.kit import scroll_bars
        scroll_bars.install(app)  # scroll bars painted without waiting for Qt's paint threads
    return app


def use_palette(app: QApplication, name: str) -> None:
    """MCQLENS_PALETTE=dark|light forces a palette (screenshots, trying the dark look); else the system's."""
    from desktop.ui.kit import colors
    name = (name or "").strip().lower()
    if name not in ("dark", "light"):
        return
    app.setStyle("Fusion")  # a style that draws with the palette it is given
    app.setPalette(colors.dark_palette() if name == "dark" else colors.light_palette())


def run(db: str, item: str | None = None, screenshot: str | None = None, annotator: str | None = None,
        size: tuple[int, int] = (1600, 1000), tab: str | None = None, model: str | None = None,
        allow_network: bool | None = None) -> int:
    """Open the window on `db`; with `screenshot`, render the window to that PNG and exit.
    `model`: the model directory (`mcqlens gui --model`; `inference.catalog.locate_model` decides).
    `allow_network`: write a database on a network file system (None: MCQLENS_ALLOW_NETWORK_DB)."""
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    if QApplication.instance() is None:
        why = problem()  # Qt would abort the process: say why, in one line, before it tries
        if why:
            raise McqLensError(why)
    app = application()
    s = settings()
    name = annotator_name(default_annotator(), annotator, s, ask=screenshot is None)
    # a screenshot changes nothing: the database is opened read-only (no predictions, no history)
    # created when items are first stored in it: a window opened to open or create another
    # database leaves no annotations.db behind in the folder it was started in
    backend = Backend.open(db, annotator=name, read_only=screenshot is not None, create_later=True,
                           allow_network=allow_network)
    if screenshot is None:
        from desktop.ui.menus.file import remember_database
        remember_database(s, db)  # File → Open recent lists it
    try:
        # before the window starts its threads (the model panel loads the model in one)
        if item and backend.item_row(item) is None:
            raise McqLensError(f"no item {item!r} in {db}")
        window = MainWindow(backend, settings=s, facts=screenshot is None, model_dir=model)
        if backend.read_only and screenshot is None:
            read_only_notice(window, backend.read_only_reason)
    except BaseException:
        backend.close()
        raise
    try:
        if item and not window.go_to(item):
            raise McqLensError(f"no item {item!r} in {db}")
        if tab and not window.show_tab(tab):
            raise McqLensError(f"no tab {tab!r}; one of: {', '.join(window.tab_names())}")
        if screenshot:
            window.resize(*size)
            window.show()
            window.render_to(screenshot)
            print(f"wrote {screenshot}")
            return 0
        window.show()
        return app.exec()
    finally:
        shut_down(window)
        backend.close()


def shut_down(window) -> None:
    """Close the window and wait for its threads: a thread still inside ONNX Runtime when
    Python exits ends the process with "terminate called without an active exception"."""
    window.close()
    review = getattr(window, "model_review", None)
    if review is not None:
        review.stop(timeout=60)  # loading a model takes seconds; never hang on exit
