"""The Reports menu: the corpus report (opened in the system browser), the agreement
between annotators, and the items on which they disagree — as a navigator filter and
as a queue for the Adjudicate dialog.

Report… runs `desktop.app.report.corpus_report` (what `mcqlens report` runs) in a
worker thread; Agreement… shows `agreement_report` (what `mcqlens agreement` writes);
the disagreements are `desktop.store.adjudication.disagreeing_items`, compared as the
Adjudicate dialog compares them.

`ReportsMenu` is a part of the window (`window.reports_menu`), built after the navigator, which
gets the disagreements' filter box.  What it uses of the window: `backend`, `database_where`,
`settings`, `path_chooser`, `navigator`, `current`, `go_to`, `refresh`, `layers`, `flush`,
`tell` and `error`.
"""
from __future__ import annotations

import os
from functools import partial

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QCheckBox, QProgressDialog

from desktop.domain.errors import McqLensError
from desktop.domain.words import count
from desktop.app.agreement import disagreeing_in_database
from desktop.app.report import report_database
from desktop.store import adjudication
from desktop.ui.dialogs.dialog_kit import FOLDER, named, wrapping
from desktop.ui.menus.actions import menu_action

DISAGREE_FILTER = "annotators disagree"  # the navigator filter's name
REPORT_DIR_KEY = "last_report_dir"


class ReportsMenu:
    def __init__(self, window):
        self.window = window
        self.open_url = QDesktopServices.openUrl  # how a finished report is shown (a test records instead)
        self.report_runner = None
        self.report_progress: QProgressDialog | None = None
        self.last_report: str | None = None
        self.agreement_dialog = None
        self.disagreeing: list[str] = []
        self.disagree_runner = None

    def build(self) -> None:
        """The Reports menu, placed next in the menu bar, and its filter box in the navigator."""
        action = partial(menu_action, self.window)
        menu = self.menu = self.window.menuBar().addMenu("&Reports")
        self.report_action = action(menu, "&Report…", lambda: self.write_report())
        self.agreement_action = action(menu, "&Agreement…", self.show_agreement)
        menu.addSeparator()
        self.disagree_action = action(menu, "Show only items where annotators &disagree",
                                      lambda checked: self.filter_disagreements(checked))
        self.disagree_action.setCheckable(True)
        self.adjudicate_all_action = action(menu, "Ad&judicate the disagreements…",
                                            lambda: self.adjudicate_disagreements())
        # the navigator's entry for the same filter
        self.disagree_box = named(QCheckBox(DISAGREE_FILTER), "Annotators disagree",
                                  "Show only the items on which annotators disagree (Reports menu)")
        self.disagree_box.toggled.connect(self.filter_disagreements)
        layout = self.window.navigator.layout()
        layout.insertWidget(max(0, layout.count() - 2), self.disagree_box)

    # ---- corpus report --------------------------------------------------------------------------
    def write_report(self, out: str | None = None) -> bool:
        """Write the corpus report into folder `out` (asked for when not given) and open index.html."""
        if self.window.backend.path in (None, "", ":memory:"):
            self.window.error("Report… works on a database file; this window's database is in memory.")
            return False
        if out is None:
            out = self._choose_report_folder()
            if not out:
                return False
        if self.report_runner is not None and self.report_runner.busy:
            self.window.tell("A report is being written already.")
            return False
        if self.window.settings is not None:
            self.window.settings.setValue(REPORT_DIR_KEY, out)
        self.window.flush()
        from desktop.ui.kit.workers import Runner

        self.report_runner = Runner(self.window)
        dialog = QProgressDialog("", "Stop waiting", 0, 0, self.window)
        dialog.setLabel(wrapping(f"Writing the report into {out}…", "Report progress"))
        dialog.setWindowTitle("Report")
        dialog.setAccessibleName("Report progress")
        dialog.setAccessibleDescription("The corpus report is being written; it opens in the browser when done")
        dialog.setMinimumDuration(0)
        dialog.setMinimumWidth(480)
        dialog.canceled.connect(self._report_cancel)
        self.report_progress = dialog
        self.report_runner.progressed.connect(dialog.setLabelText)
        self.report_runner.finished.connect(lambda summary: self._report_done(out, summary))
        self.report_runner.failed.connect(self._report_failed)
        dialog.show()
        self.report_runner.start(report_database, self.window.database_where(), out)
        return True

    def _choose_report_folder(self) -> str | None:
        """Ask for the report's folder, proposing one that exists: the last one, else `report`
        beside the database, made now (a folder dialog cannot choose a folder that is not
        there) and removed again if it is left empty and another is chosen or none."""
        remembered = str(self.window.settings.value(REPORT_DIR_KEY, "")) if self.window.settings is not None else ""
        start = remembered if remembered and os.path.isdir(remembered) else \
            os.path.join(os.path.dirname(self.window.database_where()), "report")
        made = None
        if not os.path.lexists(start):
            try:
                os.makedirs(start)
                made = start
            except OSError:
                start = os.path.dirname(start)
        out = self.window.path_chooser(self.window, "Write the report into a folder", FOLDER, start, "")
        if made is not None and (not out or os.path.abspath(out) != os.path.abspath(made)):
            try:
                os.rmdir(made)  # only while empty: never a folder with anything in it
            except OSError:
                pass
        return out or None

    def _report_done(self, out: str, summary: dict) -> None:
        self._report_closed()
        index = os.path.abspath(os.path.join(out, "index.html"))
        self.last_report = index
        self.window.tell(f"Report: {count(summary['items'], 'item')}, {summary['eligible']} eligible; {index}")
        if self.open_url(QUrl.fromLocalFile(index)) is False:  # no browser, or none that would open it
            self.window.error(f"The report is written, but no web browser could open it. Open this file by hand:\n"
                        f"{index}", title="Report written")

    def _report_failed(self, exc) -> None:
        self._report_closed()
        self.window.error(f"The report was not written: {exc}")

    def _report_cancel(self) -> None:
        if self.report_runner is not None:
            self.report_runner.cancel()  # its result is ignored; files written so far stay
        self._report_closed()
        self.window.tell("Stopped waiting for the report.")

    def _report_closed(self) -> None:
        if self.report_progress is not None:
            self.report_progress.canceled.disconnect(self._report_cancel)
            self.report_progress.close()
            self.report_progress = None

    def close_reports(self) -> None:
        """The window closes: results still to come are dropped."""
        for runner in (self.report_runner, self.disagree_runner, getattr(self.agreement_dialog, "runner", None)):
            if runner is not None:
                runner.cancel()

    # ---- agreement ------------------------------------------------------------------------------
    def show_agreement(self):
        from desktop.ui.dialogs.agreement import AgreementDialog

        self.window.flush()
        dialog = AgreementDialog(self.window)
        self.agreement_dialog = dialog
        dialog.show()
        dialog.start()
        return dialog

    # ---- disagreements --------------------------------------------------------------------------
    def disagreeing_items(self) -> list[str]:
        try:
            self.disagreeing = [d["item"] for d in adjudication.disagreeing_items(self.window.backend.store)]
        except McqLensError as exc:
            self.window.error(str(exc))
            self.disagreeing = []
        return self.disagreeing

    def filter_disagreements(self, on: bool) -> None:
        """Show only the items on which annotators disagree (or every item again); the items are
        found in a worker for a database file (it compares every item two annotators worked on)."""
        for w in (self.disagree_action, self.disagree_box):
            w.blockSignals(True)
            w.setChecked(on)
            w.blockSignals(False)
        if self.disagree_runner is not None:
            self.disagree_runner.cancel()
        if not on:
            self.window.navigator.filter_bar.set_filter_ids(DISAGREE_FILTER, None)
            return
        path = self.window.database_where()
        if path == ":memory:":
            self._show_disagreements(self.disagreeing_items())
            return
        from desktop.ui.kit.workers import Runner

        self.disagree_runner = Runner(self.window)
        self.disagree_runner.finished.connect(self._show_disagreements)
        self.disagree_runner.failed.connect(lambda exc: self.window.error(f"Could not compare the annotators: {exc}"))
        self.window.tell("Finding the items where annotators disagree…")
        self.disagree_runner.start(disagreeing_in_database, path)

    def _show_disagreements(self, items: list[str]) -> None:
        self.disagreeing = list(items)
        wanted = set(items)
        self.window.navigator.filter_bar.set_filter_ids(DISAGREE_FILTER, sorted(wanted))
        self.window.tell(f"{count(len(wanted), 'item')} on which annotators disagree.")

    def adjudicate_disagreements(self, start: str | None = None):
        """The Adjudicate dialog, fed the items with disagreements one after another."""
        from desktop.ui.dialogs.adjudication import AdjudicationDialog

        # the filter's list when it is on (found in a worker), else found now
        items = list(self.disagreeing) if self.disagree_action.isChecked() and self.disagreeing \
            else self.disagreeing_items()
        if not items:
            self.window.tell("The annotators agree on every item: nothing to adjudicate.")
            return None
        first = start if start in items else (self.window.current if self.window.current in items else items[0])
        self.window.flush()
        self.window.go_to(first)
        dialog = AdjudicationDialog(self.window.backend.store, first, parent=self.window)
        dialog.set_queue(items)
        dialog.adjudicated.connect(lambda item: self.window.refresh(item))
        dialog.itemShown.connect(self.window.go_to)
        self.window.layers.dialog = dialog
        dialog.show()
        return dialog
