"""The read-only notice a window shows when its database opened for reading only (the first window
and File → Open say it the same way)."""
from __future__ import annotations


def read_only_notice(window, reason: str | None) -> str:
    """Say in the window that it only reads: a banner above the passage, a mark in the
    status bar and the title.  Edits are still tried and refused by the store, each with
    its "Not saved: read-only: ..." line."""
    from PySide6.QtWidgets import QLabel

    text = "read-only: opened for reading" + (f" ({reason})" if reason and reason != "opened for reading" else "") \
        + "; edits cannot be saved"
    window.banner.warn(text)
    label = QLabel("<b style='color:#B00020'>read-only</b>")
    label.setToolTip(text)
    window.statusBar().addPermanentWidget(label)
    window.setWindowTitle(f"{window.windowTitle()} (read-only)")
    window.read_only_text = text
    return text
