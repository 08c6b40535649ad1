"""A plain-text box that saves itself: shortly after typing stops, on leaving it, and on flush().

There is no save button, so free text must reach the store without the
annotator doing anything; committing per keystroke would flood the history,
hence the short pause.
"""
from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QPlainTextEdit

PAUSE_MS = 700


class DebouncedText(QPlainTextEdit):
    committed = Signal(str)  # the text, once it differs from what was last shown or committed
    pending = Signal()  # typing started: not saved yet

    def __init__(self, placeholder: str = "", parent=None):
        super().__init__(parent)
        self.setPlaceholderText(placeholder)
        self._saved = ""
        self._loading = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PAUSE_MS)
        self._timer.timeout.connect(self.flush)
        self.textChanged.connect(self._changed)

    def set_text(self, text: str) -> None:
        """Show stored text without committing it."""
        self._timer.stop()
        self._loading = True
        try:
            if self.toPlainText() != text:
                self.setPlainText(text)
            self._saved = text
        finally:
            self._loading = False

    def _changed(self) -> None:
        if self._loading:
            return
        self.pending.emit()
        self._timer.start()

    def flush(self) -> None:
        self._timer.stop()
        text = self.toPlainText()
        if text != self._saved:
            self._saved = text
            self.committed.emit(text)

    def is_dirty(self) -> bool:
        return self.toPlainText() != self._saved

    def focusOutEvent(self, event):
        self.flush()
        super().focusOutEvent(event)
