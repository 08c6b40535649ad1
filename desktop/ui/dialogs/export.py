"""File → Export…: what to write (EMBRACE, ExpMRC, RACE, CSV, model predictions), whose
annotations (gold where adjudicated, everyone's, or one annotator's), which imported
file, and where.

The dialog only gathers the choices: the writing is `desktop.app.export.export`
(and `export_predictions`), the functions `mcqlens export` runs, so the file is the
one the command line would write.
"""
from __future__ import annotations

import os

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFormLayout, QVBoxLayout,
)

from desktop.app.export import LAYERS, export
from desktop.domain.errors import McqLensError
from desktop.domain.words import count
from desktop.ui.dialogs.dialog_kit import SAVE_FILE, PathField, named, wrapping

# (kind, label, file suffix)
KINDS = (
    ("embrace", "EMBRACE (JSON lines, one text per line)", ".jsonl"),
    ("expmrc", "ExpMRC (JSON with evidences)", ".json"),
    ("race", "RACE (JSON list of passages)", ".json"),
    ("csv", "CSV table (one row per question)", ".csv"),
    ("predictions", "Model predictions (CSV: probabilities, N, MI, evidence)", ".csv"),
)
GOLD_LAYER, EVERYONE = "", "*"  # the layer combo's data besides annotator names


class ExportDialog(QDialog):
    exported = Signal(str)  # the summary line, as `mcqlens export` prints it

    def __init__(self, window, parent=None):
        super().__init__(parent or window)
        self.window = window
        self.store = window.backend.store
        self.result = None
        self.setWindowTitle("Export")
        named(self, "Export", "Write the annotations to a file")
        lay = QVBoxLayout(self)

        lay.addWidget(wrapping("Write the items of this database to a file, as the command line's "
                               "“mcqlens export” does. Adjudicated (gold) versions are used where they exist "
                               "unless you choose another layer.", "About exporting"))
        self.layers_note = wrapping(LAYERS + " “Annotations of” below chooses the layer on top.",
                                    "Which annotations are written")
        lay.addWidget(self.layers_note)
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        self.kind = named(QComboBox(), "Format", "The file format to write")
        for kind, label, _ in KINDS:
            self.kind.addItem(label, kind)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        form.addRow("&Format:", self.kind)
        self.layer = named(QComboBox(), "Annotations of", "Whose annotations the file carries")
        self.layer.addItem("Everyone's over the imported, gold on top where adjudicated", GOLD_LAYER)
        self.layer.addItem("Everyone's over the imported, later over earlier (gold not preferred)", EVERYONE)
        for name in self.store.annotators():
            if name not in ("gold", "imported"):
                self.layer.addItem(f"{name}'s over the imported (as {name}'s window shows them)", name)
        form.addRow("&Annotations of:", self.layer)
        self.file = named(QComboBox(), "Source file", "Export only the items imported from one file")
        self.file.addItem("Every imported file", None)
        for f in self.store.stats()["files"]:
            if f["file"]:
                self.file.addItem(f"{os.path.basename(f['file'])} ({f['source']}, {count(f['questions'], 'question')})",
                                  f["file"])
        form.addRow("&Source file:", self.file)
        self.path = PathField(window, "Export to", SAVE_FILE, name="Output file",
                              description="The file to write; an existing file is replaced only if you agree")
        form.addRow("&Output file:", self.path)
        for combo in (self.kind, self.layer, self.file):
            # short when closed (1366×768), the whole choice in the popup and as the tooltip
            combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(20)
            combo.view().setMinimumWidth(combo.view().sizeHintForColumn(0) + 24)
            combo.setToolTip(combo.currentText())
            combo.currentTextChanged.connect(combo.setToolTip)
        lay.addLayout(form)
        self.message = wrapping("", "Export result")
        lay.addWidget(self.message)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Close)
        self.ok = buttons.button(QDialogButtonBox.Ok)
        self.ok.setText("Export")
        named(self.ok, "Export", "Write the file now")
        named(buttons.button(QDialogButtonBox.Close), "Close", "Close this dialog")
        buttons.accepted.connect(self.run)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self._kind_changed()

    def _kind_changed(self) -> None:
        kind = self.kind.currentData()
        suffix = dict((k, s) for k, _, s in KINDS)[kind]
        base = self.window.database_where()
        folder = os.path.dirname(base) if base != ":memory:" else os.getcwd()
        stem = os.path.splitext(os.path.basename(base))[0] if base != ":memory:" else "annotations"
        current = self.path.path()
        if not current or os.path.splitext(current)[1] in {s for _, _, s in KINDS}:
            name = f"{stem}-{kind}{suffix}"
            self.path.set_path(os.path.join(os.path.dirname(current) if current else folder, name))
        is_predictions = kind == "predictions"
        self.layer.setEnabled(not is_predictions)  # predictions belong to models, not annotators
        self.file.setEnabled(not is_predictions)

    def choose(self, kind: str, layer: str = GOLD_LAYER, file: str | None = None, path: str | None = None) -> None:
        """Set the dialog's fields (what a user does by hand; tests drive it this way)."""
        self.kind.setCurrentIndex(self.kind.findData(kind))
        self.layer.setCurrentIndex(self.layer.findData(layer))
        self.file.setCurrentIndex(self.file.findData(file))
        if path is not None:
            self.path.set_path(path)

    def run(self, force: bool | None = None):
        """Export with the chosen fields; returns the result (None when it did not happen)."""
        out = self.path.path()
        if not out:
            self.message.setText("Choose the file to write first.")
            return None
        if force is None and os.path.exists(out):
            force = self._confirm_replace(out)
            if not force:
                return None
        kind, layer, file = self.kind.currentData(), self.layer.currentData(), self.file.currentData()
        try:
            if kind == "predictions":
                from desktop.app.export_predictions import export_predictions

                n, n_items = export_predictions(self.store, out, force=bool(force))
                summary = f"{out}: {count(n, 'prediction')} of {count(n_items, 'question')}"
            else:
                self.result = export(self.store, kind, out, annotator=layer if layer not in (GOLD_LAYER, EVERYONE)
                                     else None, everyone=layer == EVERYONE, file=file, force=bool(force))
                summary = self.result.summary()
        except McqLensError as exc:
            self.message.setText(f"Not exported: {exc}")
            return None
        self.message.setText(f"Written: {summary}")
        self.window.tell(f"Exported {summary}")
        self.exported.emit(summary)
        return summary

    def _confirm_replace(self, out: str) -> bool:
        from PySide6.QtWidgets import QMessageBox

        answer = QMessageBox.question(self, "Export", f"{out} exists. Replace it?")
        return answer == QMessageBox.Yes
