"""File → Merge a colleague's work…: another database or an export file comes in, and
what happened — items and annotations added, and every conflict — is listed.

Preview plans the merge without writing; Merge writes it in one transaction.  Both
are `desktop.app.merge.merge_file`, what `mcqlens merge` (and `--dry-run`)
runs, so conflicts are kept exactly as the command line keeps them: the colleague's
version beside ours as the layer `<annotator>@<file name>`, until someone adjudicates.
"""
from __future__ import annotations

import json

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QFormLayout, QHeaderView, QLineEdit, QPushButton, QTableWidget,
    QTableWidgetItem, QVBoxLayout,
)

from desktop.app.merge import merge_file, summary
from desktop.domain.errors import McqLensError
from desktop.domain.words import count
from desktop.ui.dialogs.dialog_kit import OPEN_FILE, PathField, named, named_table, wrapping

OTHER_FILTER = "Databases and exports (*.db *.sqlite *.sqlite3 *.json *.jsonl *.txt);;All files (*)"
COLUMNS = ("item", "field", "annotator", "ours (kept)", "theirs (kept as)")


def _short(value, n: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= n else text[:n - 1] + "…"


class MergeDialog(QDialog):
    merged = Signal()  # after a merge that wrote something

    def __init__(self, window, parent=None):
        super().__init__(parent or window)
        self.window = window
        self.store = window.backend.store
        self.plan = None
        self.setWindowTitle("Merge a colleague's work")
        named(self, "Merge a colleague's work", "Bring another annotator's database or export file into this one")
        self.resize(900, 560)
        lay = QVBoxLayout(self)
        lay.addWidget(wrapping(
            "Bring in a colleague's database (.db) or an export file. Nothing of yours is overwritten: where the "
            "same annotator has another value, theirs is kept beside yours as “annotator@file name” and listed "
            "below, to adjudicate later (Reports → Adjudicate the disagreements…).", "About merging"))
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        self.path = PathField(window, "Merge a colleague's work", OPEN_FILE, OTHER_FILTER, name="Colleague's file",
                              description="Their database or export file")
        form.addRow("&Their file:", self.path)
        self.annotator = named(QLineEdit(), "Their name",
                               "For an export file: the annotator its annotations belong to (a database names them)")
        self.annotator.setPlaceholderText("for an export file: whose annotations they are")
        form.addRow("Their &name:", self.annotator)
        lay.addLayout(form)
        self.summary = wrapping("", "Merge summary")
        lay.addWidget(self.summary)
        self.table = named_table(QTableWidget(0, len(COLUMNS)), "Conflicts",
                           "Each conflict: the item, the field, the annotator, our value and theirs, kept side by side")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        lay.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        self.preview_button = named(QPushButton("Preview"), "Preview",
                                    "Show what the merge would add and which conflicts it would keep; writes nothing")
        self.merge_button = named(QPushButton("Merge"), "Merge", "Merge their work into this database now")
        buttons.addButton(self.preview_button, QDialogButtonBox.ActionRole)
        buttons.addButton(self.merge_button, QDialogButtonBox.AcceptRole)
        named(buttons.button(QDialogButtonBox.Close), "Close", "Close this dialog")
        self.preview_button.clicked.connect(lambda: self.run(dry_run=True))
        self.merge_button.clicked.connect(lambda: self.run(dry_run=False))
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def run(self, dry_run: bool = False):
        """Plan (dry_run) or do the merge; returns the MergePlan (None if it failed)."""
        other = self.path.path()
        if not other:
            self.summary.setText("Choose their database or export file first.")
            return None
        try:
            if not dry_run and self.window.backend.create_now():  # the window's database, made now
                self.store = self.window.backend.store
            plan = merge_file(self.store, other, annotator=self.annotator.text().strip() or None, dry_run=dry_run)
        except McqLensError as exc:
            self.summary.setText(f"Not merged: {exc}")
            return None
        self.plan = plan
        text = summary(plan, dry_run)
        if plan.skipped:
            text += f"; {count(len(plan.skipped), 'item')} skipped (stored here with another passage, stem or key)"
        self.summary.setText(("Preview: " if dry_run else "Merged: ") + text)
        self._show_conflicts(plan)
        if not dry_run:
            self.window.tell(f"Merged {other}: {text}")
            self.merged.emit()
        return plan

    def _show_conflicts(self, plan) -> None:
        self.table.setRowCount(len(plan.conflicts))
        for r, c in enumerate(plan.conflicts):
            values = (c.item, c.field, c.annotator, _short(c.ours), f"{_short(c.theirs)} → {c.kept_as}")
            for col, value in enumerate(values):
                cell = QTableWidgetItem(value)
                cell.setToolTip(value)
                self.table.setItem(r, col, cell)
        self.table.resizeRowsToContents()

    def conflicts(self) -> list[tuple[str, ...]]:
        """The table's rows as shown."""
        return [tuple(self.table.item(r, c).text() for c in range(self.table.columnCount()))
                for r in range(self.table.rowCount())]
