"""Starting the workbench: the application object, the annotator's name, the window, a screenshot."""
from __future__ import annotations

import os
import sys

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QInputDialog

from desktop.domain.errors import McqLensError


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
    return app


def use_palette(app: QApplication, name: str) -> None:
    """MCQLENS_PALETTE=dark|light forces a palette (screenshots, trying the dark look); else the system's."""
    from desktop.ui import colors
    name = (name or "").strip().lower()
    if name not in ("dark", "light"):
        return
    app.setStyle("Fusion")  # a style that draws with the palette it is given
    app.setPalette(colors.dark_palette() if name == "dark" else colors.light_palette())


def run(db: str, item: str | None = None, screenshot: str | None = None, annotator: str | None = None,
        size: tuple[int, int] = (1600, 1000), tab: str | None = None) -> int:
    """Open the window on `db`; with `screenshot`, render the window to that PNG and exit."""
    from desktop.store import default_annotator
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    app = application()
    s = settings()
    name = annotator_name(default_annotator(), annotator, s, ask=screenshot is None)
    backend = Backend.open(db, annotator=name)
    window = MainWindow(backend, settings=s, facts=screenshot is None)
    if item and not window.go_to(item):
        backend.close()
        raise McqLensError(f"no item {item!r} in {db}")
    if tab and not window.show_tab(tab):
        backend.close()
        raise McqLensError(f"no tab {tab!r}; one of: {', '.join(window.tab_names())}")
    if screenshot:
        window.resize(*size)
        window.show()
        window.render_to(screenshot)
        window.close()
        backend.close()
        print(f"wrote {screenshot}")
        return 0
    window.show()
    code = app.exec()
    backend.close()
    return code
