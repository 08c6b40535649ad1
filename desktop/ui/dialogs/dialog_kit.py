"""Small parts the menus' dialogs share: accessible names, wrapping labels, a path field,
and the one place the window asks the system for a file name.

Why a `PathChooser`: the system file dialogs are modal and native (a test cannot fill
them in), so every dialog asks through the window's `path_chooser`, which a test
replaces with a function that returns the path it wants.
"""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QFileInfo
from PySide6.QtWidgets import (
    QFileDialog, QFileIconProvider, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QWidget,
)

OPEN_FILE, SAVE_FILE, FOLDER = "open", "save", "folder"

# (parent, title, mode, start, name filter) -> chosen path, or None when cancelled
PathChooser = Callable[[QWidget, str, str, str, str], "str | None"]


class _NamesOnly(QFileIconProvider):
    """Icons and type names from the file name alone.

    Qt's own provider asks QMimeDatabase, which opens a file whose name does not say its
    type (`annotations.db`, `annotations.db-wal`, `annotations.db-shm`) to read its first
    bytes.  Closing that descriptor drops every POSIX lock this process holds on the file,
    SQLite's included, and the dialogs open in the database's folder: another program
    would then checkpoint and remove the WAL under the window (docs/reliability.md)."""

    def icon(self, what):
        if isinstance(what, QFileInfo):
            kind = QFileIconProvider.IconType.Folder if what.isDir() else QFileIconProvider.IconType.File
            return super().icon(kind)
        return super().icon(what)

    def type(self, info: QFileInfo) -> str:
        if info.isDir():
            return "Folder"
        suffix = info.suffix()
        return f"{suffix.upper()} file" if suffix else "File"


_NAMES_ONLY: _NamesOnly | None = None


def system_path_chooser(parent: QWidget, title: str, mode: str, start: str = "", name_filter: str = "") -> str | None:
    """The file dialog (modal): what the window uses unless told otherwise.

    Qt's own dialog, never the platform's: a GTK or KDE dialog runs in this process too
    and reads files to guess their type, which no option turns off (see `_NamesOnly`)."""
    global _NAMES_ONLY
    if _NAMES_ONLY is None:
        _NAMES_ONLY = _NamesOnly()
    dialog = QFileDialog(parent, title, start, name_filter)
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    dialog.setIconProvider(_NAMES_ONLY)
    if mode == FOLDER:
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    elif mode == SAVE_FILE:
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    else:
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    try:
        if dialog.exec() != QFileDialog.DialogCode.Accepted:
            return None
        chosen = dialog.selectedFiles()
        return chosen[0] if chosen else None
    finally:
        dialog.deleteLater()


def named(widget: QWidget, name: str, description: str = "") -> QWidget:
    """Give `widget` the name and description a screen reader speaks; returns it."""
    widget.setAccessibleName(name)
    widget.setAccessibleDescription(description or name)
    if description and not widget.toolTip():
        widget.setToolTip(description)
    return widget


def wrapping(text: str, name: str = "", rich: bool = False) -> QLabel:
    """A label that wraps at the width it is given instead of being cut (1366×768 screens)."""
    from PySide6.QtCore import Qt

    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.RichText if rich else Qt.PlainText)
    label.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    named(label, name or "Explanation", text if not rich else (name or "Explanation"))
    return label


class PathField(QWidget):
    """A line edit for a path and a Browse… button that asks the window's path chooser."""

    def __init__(self, window, title: str, mode: str, name_filter: str = "", name: str = "Path",
                 description: str = "", parent=None):
        super().__init__(parent)
        self.window, self.title, self.mode, self.name_filter = window, title, mode, name_filter
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = named(QLineEdit(), name, description)
        self.edit.setMinimumWidth(200)
        self.browse = named(QPushButton("Browse…"), f"Browse for the {name.lower()}",
                            f"Choose the {name.lower()} with the system's file dialog")
        self.browse.clicked.connect(self._browse)
        lay.addWidget(self.edit, 1)
        lay.addWidget(self.browse)
        named(self, name, description)

    def _browse(self) -> None:
        chooser = getattr(self.window, "path_chooser", system_path_chooser)
        start = self.path() or os.getcwd()
        path = chooser(self, self.title, self.mode, start, self.name_filter)
        if path:
            self.edit.setText(path)

    def path(self) -> str:
        return self.edit.text().strip()

    def set_path(self, path: str) -> None:
        self.edit.setText(path)


def named_table(table, name: str, description: str = ""):
    """Name a table and the parts Qt adds to it (headers, the select-all corner button)."""
    from PySide6.QtWidgets import QAbstractButton

    named(table, name, description)
    named(table.horizontalHeader(), f"{name}: column headers", f"The columns of {name.lower()}")
    named(table.verticalHeader(), f"{name}: row headers", f"The rows of {name.lower()}")
    for button in table.findChildren(QAbstractButton):
        if button.objectName() == "qt_tableview_cornerbutton":
            named(button, f"{name}: select all", f"Select every cell of {name.lower()}")
    return table
