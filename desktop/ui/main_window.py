"""The workbench window: navigator | passage and question | difficulty, problems, comments.

The window holds the open item and the widgets that show it; each menu is a part of its own,
an object the window makes and keeps (`window.file_menu`, …), given the window for the few
services it needs (named in each part's docstring):

| menu | part | module |
| --- | --- | --- |
| File (new, open, recent, import, export, merge) | `file_menu` | `menus/file.py` (dialogs: `dialogs/export.py`, `dialogs/merge.py`) |
| Edit (undo, redo) | `edit_menu` | `menus/edit.py`; every edit itself: `editing` (`editing/edits.py`) |
| Mark (and the mark bar) | `mark_menu` | `menus/mark.py` |
| Go (next, previous, unfinished) | `go_menu` | `menus/go.py` |
| Annotators (layers, adjudicate) | `layers` | `menus/annotators.py`, `dialogs/adjudication.py` |
| Model (model directory, score all; the panel) | `model_menu`, `model_review` | `menus/model.py`, `model/review.py` (the panel: `model/panel.py`) |
| Reports (report, agreement, disagreements) | `reports_menu` | `menus/reports.py`, `dialogs/agreement.py` |
| Help | `help_menu`, `help` | `menus/help.py`, `help/window.py` |

The services the parts use: the open item (`current`, `state`, `backend`, `settings`), the
widgets, and `edit`, `flush`, `refresh`, `go_to`, `reload_items`, `tell`, `error`.

Every edit becomes one `store.apply(Change)` the moment it is made; the status
bar says "saved" only after the store has committed it.  Reading files and
computing the navigator's facts happen in worker threads; the GUI thread alone
writes to the store.
"""
from __future__ import annotations

import html
import os

from PySide6.QtCore import QEvent, QSettings, Qt
from PySide6.QtWidgets import (
    QApplication, QLabel, QMainWindow, QMessageBox, QSplitter, QStackedWidget, QVBoxLayout, QWidget,
)

from desktop.domain import difficulty as km
from desktop.domain import typology as ty
from desktop.domain.errors import McqLensError
from desktop.domain.model import BASIS
from desktop.domain.words import count
from desktop.ui.backend import Backend, ItemState, question_facts
from desktop.ui.dialogs.dialog_kit import system_path_chooser
from desktop.ui.editing.edits import Editing
from desktop.ui.editing.other_windows import ChangeWatcher, ConflictBanner
from desktop.ui.item.comments_panel import CommentsPanel
from desktop.ui.item.difficulty_form import DifficultyForm
from desktop.ui.item.panel_tabs import PanelTabs
from desktop.ui.item.passage_view import PassageView
from desktop.ui.item.problems_panel import ProblemsPanel
from desktop.ui.item.question_view import QuestionView
from desktop.ui.item.suggestions import pending
from desktop.ui.kit import main_thread_gc
from desktop.ui.kit.deferred import WhenShown
from desktop.ui.kit.fit_text import ElidedLabel
from desktop.ui.kit.status_bar import MessageBar
from desktop.ui.kit.window_fit import initial_size
from desktop.ui.kit.workers import Runner
from desktop.ui.menus.edit import EditMenu
from desktop.ui.menus.file import FileMenu
from desktop.ui.menus.go import GoMenu
from desktop.ui.menus.help import HelpMenu
from desktop.ui.menus.mark import MarkMenu
from desktop.ui.menus.model import ModelMenu
from desktop.ui.menus.reports import ReportsMenu
from desktop.ui.navigator.panel import Navigator
from desktop.ui.welcome_page import WelcomePage
from inference.catalog import locate_model  # given (gui --model, File → Open) → remembered → shipped


class MainWindow(QMainWindow):
    def __init__(self, backend: Backend, settings: QSettings | None = None, facts: bool = True,
                 model_dir: str | None = None):
        super().__init__()
        # before any worker thread starts: cycles are collected on this thread only
        main_thread_gc.install()
        self.backend = backend
        self.settings = settings
        self.state: ItemState | None = None
        self.current: str | None = None
        self.last_message: str = ""
        self.last_error: str = ""
        self.importing = False  # File → Import is reading or storing (the model's thread holds back)
        self.owns_backend = False  # a window opened by File → Open closes its database itself
        self.replaced_by = None  # the window that took this one's place (File → Open)
        self.path_chooser = system_path_chooser  # tests give a function that returns their path
        self.want_facts = facts
        self.watcher = None  # other windows on the same database: watched once the items are shown

        # The parts first, without widgets of their own yet: the widgets built next connect their
        # signals to them (the passage to the mark menu, the forms to editing).
        self.editing = Editing(self)
        self.file_menu = FileMenu(self)
        self.edit_menu = EditMenu(self)
        self.mark_menu = MarkMenu(self)
        self.go_menu = GoMenu(self)
        self.model_menu = ModelMenu(self)
        self.reports_menu = ReportsMenu(self)
        self.help_menu = HelpMenu(self)
        self._build()
        # The menu bar, left to right: a menu goes where it is built, so this order is the bar's.
        for part in (self.file_menu, self.edit_menu, self.mark_menu, self.go_menu):
            part.build()
        from desktop.ui.menus.annotators import install_annotators_menu
        self.layers = install_annotators_menu(self)  # Annotators menu; filters the passage's spans by annotator
        self.model_menu.build()  # before the model panel, which adds its actions to it
        self.reports_menu.build()  # after the navigator, which gets its filter box
        self.help_menu.build()  # last in the bar; the help window adds its actions to it
        self._show_database()
        self.facts_runner = Runner(self)
        self.facts_runner.finished.connect(self._facts_ready)
        from desktop.ui.model.review import install as install_model_review
        # model panel (its actions join the Model menu); None if it cannot start
        self.model_review = install_model_review(self, locate_model(model_dir, self.model_menu.remembered_model_dir()))
        from desktop.ui.help.window import install_help_menu
        self.help = install_help_menu(self)  # Help menu: F1 shortcut sheet, the annotation guide
        self.reload_items()
        self.watcher = ChangeWatcher(self)  # other windows and `mcqlens annotate` on the same database
        self.watcher.start_from_now()
        from desktop.ui.kit import accessibility
        accessibility.ensure(self)  # every control has a name and a description for screen readers

    # ================================================================ layout
    def _build(self) -> None:
        self.navigator = Navigator()
        self.navigator.itemChosen.connect(self.open_item)

        marks = self.mark_menu
        self.passage = PassageView()
        self.passage.markRequested.connect(marks.mark)
        self.passage.removeRequested.connect(lambda sid: self.edit("span.remove", {"id": sid}))
        self.passage.updateRequested.connect(marks.update_span)
        self.passage.spanSelected.connect(marks.span_selected)
        self.question_view = QuestionView()
        self.question_view.basisRequested.connect(lambda i: marks.mark_button(BASIS, i))

        toolbar = marks.build_bar()

        center = QWidget()
        cl = QVBoxLayout(center)
        cl.setContentsMargins(2, 2, 2, 2)
        self.banner = ConflictBanner()
        cl.addWidget(self.banner)
        cl.addLayout(toolbar)
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.passage)
        split.addWidget(self.question_view)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([600, 330])
        cl.addWidget(split, 1)

        editing = self.editing
        self.difficulty = DifficultyForm()
        self.difficulty.valueChosen.connect(lambda var, v: self.edit(f"difficulty.{var}", v))
        self.problems = ProblemsPanel()
        self.problems.tagToggled.connect(editing.tag_toggled)
        self.problems.alternativeTagToggled.connect(editing.alternative_tag_toggled)
        self.problems.suggestionAnswered.connect(editing.suggestion_answered)
        self.problems.suggestionChosen.connect(editing.suggestion_chosen)
        self.problems.fieldEdited.connect(self.edit)
        self.problems_later = WhenShown(self.problems)
        self.comments = CommentsPanel()
        self.comments.fieldEdited.connect(self.edit)
        self.comments.doneAndNext.connect(self.go_menu.done_and_next)
        self.comments.comment.pending.connect(editing.typing_started)
        self.problems.note.pending.connect(editing.typing_started)
        self.tabs = PanelTabs()
        self.tabs.setAccessibleName("Item assessment")
        self.tabs.setAccessibleDescription("Difficulty, problems, comments and status of the open item")
        self.tabs.add_panel(self.difficulty, "Difficulty")
        self.tabs.add_panel(self.problems, "Problems")
        self.tabs.add_panel(self.comments, "Comments && status")

        work = QSplitter(Qt.Horizontal)
        work.addWidget(self.navigator)
        work.addWidget(center)
        work.addWidget(self.tabs)
        work.setSizes([330, 820, 430])
        work.setStretchFactor(1, 1)
        self.work = work

        self.welcome = WelcomePage(self.backend.path, self.file_menu.choose_import, self.file_menu.load_demo)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.welcome)
        self.pages.addWidget(work)
        self.setCentralWidget(self.pages)

        self.setStatusBar(MessageBar())  # messages in a label of their own, cut with "…" where they must be
        self.save_label = ElidedLabel()  # what the last edit did: "✓ Saved: basis of B added"
        self.save_label.setAccessibleName("Last edit")
        self.annotator_label = QLabel(f"annotator: <b>{html.escape(self.backend.annotator)}</b>")
        self.database_label = ElidedLabel(mode=Qt.ElideMiddle)  # a long path keeps its file name
        self.database_label.setAccessibleName("Database")
        self.statusBar().addPermanentWidget(self.save_label)
        self.statusBar().addPermanentWidget(self.annotator_label)
        self.statusBar().addPermanentWidget(self.database_label)
        self.resize(*initial_size(self, 1580, 960))

    # ================================================================ the database
    def database_name(self) -> str:
        path = self.backend.path
        return "in-memory database" if path in (None, "", ":memory:") else os.path.basename(path)

    def database_where(self) -> str:
        path = self.backend.path
        return path if path in (None, "", ":memory:") else os.path.abspath(path)

    def _show_database(self) -> None:
        """The title bar names the database; the status bar says where it is."""
        where = self.database_where()
        later = " (created when you import items)" if self.backend.create_at else ""
        self.database_label.setText(f"database: {where}{later}")
        self.database_label.setToolTip(where + later)
        self.database_label.setAccessibleDescription(f"The database file: {where}{later}")
        self.setWindowFilePath(where if where != ":memory:" else "")
        self._set_title()

    def _set_title(self, item: str | None = None) -> None:
        self.setWindowTitle(" — ".join(x for x in (self.database_name(), item, "MCQ Lens") if x))

    # ================================================================ items
    def reload_items(self, select: str | None = None) -> None:
        self._show_database()  # the first import may just have created it
        nav = self.backend.navigation()
        if nav.is_empty():
            self.pages.setCurrentWidget(self.welcome)
            self.current, self.state = None, None
            return
        self.pages.setCurrentWidget(self.work)
        self._share_width()
        self.navigator.bind(nav, self.backend.annotator, self.backend.store)
        first = self.navigator.first_item() or nav.first_item()
        target = select or self.current or first
        if target is None or nav.rowid(target) is None:
            target = first
        if target is None:
            return
        self.current = None
        self.navigator.select(target)
        if self.current != target:  # selecting an already current index emits nothing
            self.open_item(target)
        if self.want_facts:
            self.start_facts()

    def open_item(self, item_id: str) -> None:
        if item_id == self.current and self.state is not None:
            return
        main_thread_gc.busy()  # a collection of the older objects waits for a pause in the moves
        self.flush()
        try:
            state = self.backend.load(item_id)
        except McqLensError as exc:
            self.error(str(exc))
            return
        self.current = item_id
        self.state = state
        if self.navigator.current != item_id:
            self.navigator.select(item_id, emit=False)
        self.render(new_item=True)

    def render(self, new_item: bool = False) -> None:
        """Show the open item's state: new_item, a move to another item; else the same item after an edit."""
        st = self.state
        q = st.question
        if new_item:
            self.passage.set_passage(st.passage_text, q.spans, len(q.alternatives))
            self.question_view.set_question(q, st.passage_text)
            self.mark_menu.basis_button_row(len(q.alternatives))
        else:
            keep = self.passage.selected_span()
            self.passage.set_spans(q.spans)
            if keep is not None:
                self.passage.select_span(keep.id)
            self.question_view.update_counts(q)
        owner = ""
        if st.inherited:
            who = "”, “".join(dict.fromkeys(st.shown.by.get(v, "imported") for v in sorted(st.inherited)))
            owner = (f"{count(len(st.inherited), 'value')} shown from the assessment of “{who}”; "
                     "choosing a value records your own.")
        self.difficulty.set_values(st.values, owner)
        worst = ty.item_worst_tier(q.problems)
        eligible, why = km.eligibility(st.text_format, st.unit_type, worst)
        self.difficulty.set_eligibility(eligible, why)
        # the Problems tab behind another is brought up to date when it comes to the front
        self.problems_later.update("item", lambda: self._show_problems(st))
        self.comments.set_item(st.own_comments, q.answerability, st.status, st.other_comments, reset=new_item)
        self.comments.set_time_on_item(st.time_on_item)
        self._set_title(q.id)
        if getattr(self, "model_review", None) is not None:
            self.model_review.show(st, new_item)
        # Lay the panels out now, once: left to the event loop, the paint that is already
        # asked for runs first and the re-layout after it paints the moved parts a second time.
        QApplication.sendPostedEvents(None, QEvent.LayoutRequest)

    def _show_problems(self, st: ItemState) -> None:
        q = st.question
        self.problems.set_item(q.problems, st.note, st.text_format, st.multiple_texts, st.unit_type,
                               n_alternatives=len(q.alternatives))
        self.problems.set_suggestions(pending(q, st.passage_text))

    # ================================================================ facts for the filters
    def start_facts(self) -> None:
        """The navigator's facts (acceptability, eligibility, totals, model flags) of the annotated
        items, computed in a worker; the others have an unannotated item's facts."""
        self.facts_runner.start(self.backend.all_facts)

    def _facts_ready(self, facts: dict) -> None:
        self.backend.navigation().put_facts(facts)
        self.navigator.facts_changed()

    def update_item_facts(self, item_id: str) -> None:
        """Recompute the open item's facts (its row in the filters) from what is loaded already: after
        an edit, or new predictions stored by the model panel."""
        st = self.state
        if st is not None and self.current == item_id:
            self.backend.navigation().put_facts({st.question.id: question_facts(st.question, self.backend.annotator)})

    def go_to(self, item_id: str) -> bool:
        """Open `item_id` and select it in the navigator; False if the database has no such item."""
        if self.backend.navigation().rowid(item_id) is None:
            return False
        self.navigator.select(item_id)
        if self.current != item_id:
            self.open_item(item_id)
        return True

    # ================================================================ editing (the part: self.editing)
    def edit(self, field: str, value, redraw: bool = True) -> int | None:
        """Store one change of the open item at once; its history id, or None when refused."""
        return self.editing.edit(field, value, redraw)

    def flush(self) -> None:
        """Store text still being typed (before leaving an item, another action, or closing)."""
        self.editing.flush()

    def refresh(self, item_id: str | None = None) -> None:
        """Reload the open item (or only `item_id`'s navigator row) from the store."""
        self.editing.refresh(item_id)

    # ================================================================ messages, closing
    def tell(self, text: str) -> None:
        self.last_message = text
        self.statusBar().showMessage(text, 10000)

    def error(self, text: str, title: str = "MCQ Lens") -> None:
        self.last_error = text
        self.statusBar().showMessage(text, 15000)
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self)
        box.setTextInteractionFlags(Qt.TextSelectableByMouse)  # a path in it can be copied
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()  # not exec(): the window keeps running (and tests are not blocked)

    def showEvent(self, event):
        super().showEvent(event)
        self._share_width()

    def _share_width(self) -> None:
        """Share the width once the work area shows at its real size: the passage gets the most."""
        if getattr(self, "_shared_out", False) or not self.isVisible() or self.pages.currentWidget() is not self.work:
            return
        self._shared_out = True
        w = max(self.width() - 12, 900)
        nav, tabs = int(w * 0.22), int(w * 0.27)  # the navigator: two filter boxes a row, their names whole
        self.work.setSizes([nav, w - nav - tabs, tabs])

    def closeEvent(self, event):
        self.flush()
        self.facts_runner.cancel()
        self.file_menu.import_runner.cancel()
        self.facts_runner.wait(5)
        self.reports_menu.close_reports()
        self.model_menu.stop_scoring()
        super().closeEvent(event)
        # a closed window reads nothing more: its list would ask the database for rows whenever
        # Qt re-lays it out (a style change does), and the database may be closed next
        self.navigator.unbind()
        if self.owns_backend:
            self.backend.close()

    def tab_names(self) -> list[str]:
        return [self.tabs.tabText(i).replace("&&", "&").lower() for i in range(self.tabs.count())]

    def show_tab(self, name: str) -> bool:
        """Bring the side panel's tab whose title starts with `name` to the front (mcqlens gui --tab)."""
        for i, title in enumerate(self.tab_names()):
            if title.startswith(name.strip().lower()):
                self.tabs.setCurrentIndex(i)
                return True
        return False

    def render_to(self, path: str) -> None:
        """Write what the window shows as an image (mcqlens gui --screenshot)."""
        if getattr(self, "model_review", None) is not None:
            self.model_review.settle()  # the model panel shows the item's scores, not "loading"
        for _ in range(3):
            QApplication.processEvents()
        if not self.grab().save(path):
            raise McqLensError(f"cannot write the screenshot {path}")
