"""The page the window shows while its database has no items: how to bring some in."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class WelcomePage(QWidget):
    def __init__(self, db_path, choose_import, load_demo, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.addStretch(1)
        self.text = QLabel(
            "<h2>This database has no items yet</h2>"
            "<p>Bring RACE, EMBRACE or ExpMRC items in with <b>File → Import…</b> (Ctrl+O), "
            "or from a terminal:</p>"
            f"<pre>  mcqlens import FILE --db {html.escape(str(db_path))}</pre>"
            "<p>Every edit is saved the moment you make it; Ctrl+Z undoes, also after a restart.</p>"
            "<p>To look around first, load six demo questions written for MCQ Lens.</p>")
        self.text.setTextFormat(Qt.RichText)
        self.text.setAlignment(Qt.AlignCenter)
        self.text.setWordWrap(True)
        self.idle = self.text.text()
        lay.addWidget(self.text)
        row = QHBoxLayout()
        row.addStretch(1)
        imp = QPushButton("Import a file…")
        imp.setToolTip("Import RACE, EMBRACE, ExpMRC, DREAM or QuAIL items into this database")
        imp.clicked.connect(lambda: choose_import())
        demo = QPushButton("Load the demo items")
        demo.setToolTip("Six demo questions written for MCQ Lens, to look around first")
        demo.clicked.connect(lambda: load_demo())
        row.addWidget(imp)
        row.addWidget(demo)
        row.addStretch(1)
        self.buttons = (imp, demo)
        lay.addLayout(row)
        lay.addStretch(2)

    def busy(self, what: str | None) -> None:
        """While a file is read: one line on what is happening, under the progress dialog, instead
        of the instructions half hidden by it (None: back to them)."""
        self.text.setText(f"<h2>{html.escape(what)}</h2>" if what else self.idle)
        for button in self.buttons:
            button.setVisible(not what)
