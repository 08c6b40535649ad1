"""One menu entry: a QAction owned by the window, with its keys working anywhere in it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence


def menu_action(window, menu, text: str, slot, keys=()) -> QAction:
    """Add `text` to `menu`, calling `slot`; `keys` act while the window (not only the menu) has focus."""
    a = QAction(text, window)
    if keys:
        a.setShortcuts([QKeySequence(k) for k in keys])
        a.setShortcutContext(Qt.WindowShortcut)
    a.triggered.connect(slot)
    menu.addAction(a)
    return a
