"""Reports → Agreement…: how far the annotators agree, overall and per pair, and the items
of lowest agreement (click one to open it).

The numbers are `desktop.app.agreement.agreement_report`, what `mcqlens agreement`
writes to agreement.json: ExpMRC-style evidence and basis F1 (percent), Cohen's or
Fleiss' κ on each Kirsch–Mosenthal variable, Krippendorff's ordinal α on its points
and on the total, κ on problem tags and acceptability.  Computed in a worker thread.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QListWidget, QListWidgetItem, QSplitter,
    QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from desktop.app.agreement import agreement_of_database, agreement_report
from desktop.ui.dialogs.dialog_kit import named, named_table, wrapping

from desktop.domain.words import count

LOWEST = 100  # items listed, lowest agreement first
ITEM_ROLE = Qt.UserRole


def measure_rows(overall: dict) -> list[tuple[str, float | None, str]]:
    """(measure, value, how to read it) for one overall block of the report."""
    rows = [("evidence F1", overall["evidence_f1"]["value"], "percent, ExpMRC"),
            ("basis F1", overall["basis_f1"]["value"], "percent, ExpMRC")]
    for var, c in overall["difficulty"].items():
        rows.append((f"{var.upper()} κ", c.get("kappa"), c.get("kappa_method", "")))
        rows.append((f"{var.upper()} α", c.get("alpha_ordinal"), "ordinal, on points"))
    rows.append(("total α", overall["difficulty_total"].get("alpha_ordinal"), "ordinal"))
    rows.append(("problem tags κ", overall["tags"].get("kappa"), overall["tags"].get("kappa_method", "")))
    rows.append(("acceptability κ", overall["acceptability"].get("kappa"),
                 overall["acceptability"].get("kappa_method", "")))
    return rows


def _fmt(value: float | None, percent: bool) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" if percent else f"{value:.3f}"


class AgreementDialog(QDialog):
    ready = Signal()  # the report is shown
    itemChosen = Signal(str)

    def __init__(self, window, parent=None):
        super().__init__(parent or window)
        self.window = window
        self.report: dict | None = None
        self.setWindowTitle("Agreement between annotators")
        named(self, "Agreement between annotators", "Agreement overall, per pair of annotators, and per item")
        self.resize(1000, 640)
        lay = QVBoxLayout(self)
        self.heading = wrapping("Comparing the annotators' layers…", "Agreement summary")
        lay.addWidget(self.heading)
        split = QSplitter(Qt.Vertical)
        self.table = named_table(QTableWidget(), "Agreement per measure",
                           "One row per measure, one column for all annotators and one per pair")
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        split.addWidget(self.table)
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(wrapping("Items of lowest agreement (click one to open it):", "Lowest agreement"))
        self.items = named(QListWidget(), "Items of lowest agreement",
                           "Lowest agreement first; choosing one opens the item in the window")
        self.items.setWordWrap(True)
        self.items.itemClicked.connect(self._clicked)
        self.items.itemActivated.connect(self._clicked)
        bl.addWidget(self.items, 1)
        split.addWidget(bottom)
        lay.addWidget(split, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        named(buttons.button(QDialogButtonBox.Close), "Close", "Close this dialog")
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.runner = None

    def start(self) -> None:
        """Compute the report (in a worker for a database file)."""
        path = self.window.database_where()
        if path == ":memory:":
            self.show_report(agreement_report(self.window.backend.store))
            return
        from desktop.ui.kit.workers import Runner

        self.runner = Runner(self)
        self.runner.progressed.connect(self.heading.setText)
        self.runner.finished.connect(self.show_report)
        self.runner.failed.connect(lambda exc: self.heading.setText(f"Agreement could not be computed: {exc}"))
        self.runner.start(agreement_of_database, path)

    def show_report(self, report: dict) -> None:
        self.report = report
        overall = report["overall"]
        pairs = report.get("pairs", {})
        self.heading.setText(
            f"{count(overall['items'], 'item')} with at least two annotators; "
            f"{count(len(pairs), 'pair of annotators')}. κ: Cohen's for two annotators, Fleiss' for more; "
            "α: Krippendorff's ordinal; F1 in percent as ExpMRC measures human agreement.")
        columns = [("all annotators", overall)] + list(pairs.items())
        rows = measure_rows(overall)
        self.table.setRowCount(len(rows))
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels([name for name, _ in columns])
        self.table.setVerticalHeaderLabels([name for name, _, _ in rows])
        for c, (_, block) in enumerate(columns):
            for r, (name, value, how) in enumerate(measure_rows(block)):
                cell = QTableWidgetItem(_fmt(value, name.endswith("F1")))
                cell.setToolTip(f"{name} ({how})" if how else name)
                self.table.setItem(r, c, cell)
        self.items.clear()
        for row in report["items"][:LOWEST]:
            parts = [f"{k.replace('_', ' ')} {row[k]:.0f}" for k in
                     ("evidence_f1", "basis_f1", "difficulty_agreement", "tag_agreement", "acceptability_agreement")
                     if row.get(k) is not None]
            it = QListWidgetItem(f"{row['item']} — agreement {row['agreement']:.0f}% ({', '.join(parts)})")
            it.setData(ITEM_ROLE, row["item"])
            self.items.addItem(it)
        self.ready.emit()

    def listed_items(self) -> list[str]:
        return [self.items.item(i).data(ITEM_ROLE) for i in range(self.items.count())]

    def _clicked(self, it: QListWidgetItem) -> None:
        item = it.data(ITEM_ROLE)
        if self.window.go_to(item):
            self.itemChosen.emit(item)
        else:
            self.heading.setText(f"{item} is not among the items the window lists.")
