"""The window's status bar: a message that ends with "…" where it must, never over its neighbours.

Qt draws a status message straight onto the bar, clipped at the first permanent widget:
a long message ran into the save mark ("Score all ag✓ Redone") or stopped mid-word.  Here
the message is a label in the bar's own layout, beside the save mark and the database,
each cut with "…" and given whole in its tooltip when the window is narrow.
"""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QStatusBar

from desktop.ui.kit.fit_text import ElidedLabel


class MessageBar(QStatusBar):
    """`showMessage(text, ms)` / `currentMessage()` / `clearMessage()` as QStatusBar's, in a label."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.message = ElidedLabel()
        self.message.setAccessibleName("Message")
        self.addWidget(self.message, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clearMessage)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802 - Qt's name
        self.message.setText(text)
        self.message.setAccessibleDescription(text)
        if timeout > 0:
            self._timer.start(timeout)
        else:
            self._timer.stop()

    def currentMessage(self) -> str:  # noqa: N802 - Qt's name
        return self.message.full_text()

    def clearMessage(self) -> None:  # noqa: N802 - Qt's name
        self._timer.stop()
        self.message.setText("")
