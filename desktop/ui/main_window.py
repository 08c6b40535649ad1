"""The workbench window: navigator | passage and question | difficulty, problems, comments.

Every edit becomes one `store.apply(Change)` the moment it is made; the status
bar says "saved" only after the store has committed it.  Reading files and
computing the navigator's facts happen in worker threads; the GUI thread alone
writes to the store.
"""
from __future__ import annotations

import html
import os
import time
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog, QHBoxLayout, QLabel, QMainWindow, QMessageBox, QProgressDialog, QPushButton, QSizePolicy,
    QSplitter,
    QStackedWidget, QTabWidget, QToolButton, QVBoxLayout, QWidget,
)

from desktop.domain.errors import McqLensError
from desktop.store.conflicts import StaleEditError
from desktop.domain.model import BASIS, EVIDENCE, REQUIRED, Dataset, Passage, letter
from desktop.ui import colors, main_thread_gc
from desktop.ui.backend import Backend, ItemState, compute_facts, read_file
from desktop.ui.comments_panel import CommentsPanel
from desktop.ui.difficulty_form import DifficultyForm
from desktop.ui.navigator import Navigator
from desktop.ui.other_windows import ChangeWatcher, ConflictBanner, describe, when
from desktop.ui.passage_view import PassageView
from desktop.ui.problems_panel import ProblemsPanel
from desktop.ui.question_view import QuestionView
from desktop.ui.workers import Runner

PROGRESS_STEPS = 1000  # the import bar's resolution
IMPORT_FILTER = "Item files (*.json *.jsonl *.txt *.xml *.csv);;All files (*)"


class MainWindow(QMainWindow):
    def __init__(self, backend: Backend, settings: QSettings | None = None, facts: bool = True):
        super().__init__()
        # before any worker thread starts: cycles are collected on this thread only
        main_thread_gc.install()
        self.backend = backend
        self.settings = settings
        self.state: ItemState | None = None
        self.current: str | None = None
        self.last_saved: int | None = None  # history id of the last edit the store committed
        self.last_message: str = ""
        self.last_error: str = ""
        self.importing = False
        self._want_facts = facts
        self.setWindowTitle(f"MCQ Lens — {backend.path}")
        self._build()
        self._build_menus()
        from desktop.ui.layers import install_annotators_menu
        self.layers = install_annotators_menu(self)  # Annotators menu; filters the passage's spans by annotator
        self.facts_runner = Runner(self)
        self.facts_runner.finished.connect(self._facts_ready)
        self.import_runner = Runner(self)
        self.import_runner.progressed.connect(self._import_progress)
        self.import_runner.advanced.connect(self._import_advanced)
        self.import_runner.finished.connect(self._import_read)
        self.import_runner.failed.connect(self._import_failed)
        self._progress: QProgressDialog | None = None
        from desktop.ui.model_panel import install as install_model_review
        self.model_review = install_model_review(self)  # model panel, Model menu; None if it cannot start
        from desktop.ui.help_window import install_help_menu
        self.help = install_help_menu(self)  # Help menu: F1 shortcut sheet, the annotation guide
        self.reload_items()
        self.watcher = ChangeWatcher(self)  # other windows and `mcqlens annotate` on the same database
        self.watcher.start_from_now()
        from desktop.ui import accessibility
        accessibility.ensure(self)  # every control has a name and a description for screen readers

    # ================================================================ layout
    def _build(self) -> None:
        self.navigator = Navigator(search_passages=self.backend.search_passages)
        self.navigator.itemChosen.connect(self.open_item)

        self.passage = PassageView()
        self.passage.markRequested.connect(self._mark)
        self.passage.removeRequested.connect(lambda sid: self.edit("span.remove", {"id": sid}))
        self.passage.updateRequested.connect(self._update_span)
        self.passage.spanSelected.connect(self._span_selected)
        self.question_view = QuestionView()
        self.question_view.basisRequested.connect(lambda i: self._mark_button(BASIS, i))

        toolbar = QHBoxLayout()
        toolbar.setContentsMargins(0, 0, 0, 0)
        toolbar.addWidget(QLabel("Mark:"))
        t = colors.theme()
        ev = QPushButton("Evidence (E)")
        ev.setToolTip("Mark the selected passage words as evidence for the key (E)")
        ev.setStyleSheet(f"QPushButton {{ background: {t.evidence_bg}; color: {t.evidence_text}; padding: 3px 8px; }}")
        ev.clicked.connect(lambda: self._mark_button(EVIDENCE))
        req = QPushButton("Required ¶ (P)")
        req.setToolTip("Mark the paragraphs of the selection as required paragraphs")
        req.setStyleSheet(f"QPushButton {{ border-left: 6px solid {colors.REQUIRED_HEX}; padding: 3px 8px; }}")
        req.clicked.connect(lambda: self._mark_button(REQUIRED))
        self._basis_buttons = QHBoxLayout()
        self.remove_button = QPushButton("Remove (Del)")
        self.remove_button.setToolTip("Remove the selected span")
        self.remove_button.setEnabled(False)
        self.remove_button.clicked.connect(self._remove_selected)
        for b in (ev, req, self.remove_button):
            b.setFocusPolicy(Qt.NoFocus)
        toolbar.addWidget(ev)
        toolbar.addLayout(self._basis_buttons)
        toolbar.addWidget(req)
        toolbar.addStretch(1)
        self.span_info = QLabel()
        self.span_info.setStyleSheet(f"color: {t.muted};")
        self.span_info.setMinimumWidth(10)
        self.span_info.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        toolbar.addWidget(self.span_info)
        toolbar.addWidget(self.remove_button)

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

        self.difficulty = DifficultyForm()
        self.difficulty.valueChosen.connect(lambda var, v: self.edit(f"difficulty.{var}", v))
        self.problems = ProblemsPanel()
        self.problems.tagToggled.connect(self._tag_toggled)
        self.problems.alternativeTagToggled.connect(self._alternative_tag_toggled)
        self.problems.suggestionAnswered.connect(self._suggestion_answered)
        self.problems.suggestionChosen.connect(self._suggestion_chosen)
        self.problems.fieldEdited.connect(self.edit)
        self.comments = CommentsPanel()
        self.comments.fieldEdited.connect(self.edit)
        self.comments.doneAndNext.connect(self.done_and_next)
        self.comments.comment.pending.connect(self._typing)
        self.problems.note.pending.connect(self._typing)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Item assessment")
        self.tabs.setAccessibleDescription("Difficulty, problems, comments and status of the open item")
        self.tabs.addTab(self.difficulty, "Difficulty")
        self.tabs.addTab(self.problems, "Problems")
        self.tabs.addTab(self.comments, "Comments && status")

        work = QSplitter(Qt.Horizontal)
        work.addWidget(self.navigator)
        work.addWidget(center)
        work.addWidget(self.tabs)
        work.setSizes([330, 820, 430])
        work.setStretchFactor(1, 1)
        self.work = work

        self.welcome = self._welcome_page()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.welcome)
        self.pages.addWidget(work)
        self.setCentralWidget(self.pages)

        self.save_label = QLabel("")
        self.annotator_label = QLabel(f"annotator: <b>{self.backend.annotator}</b>")
        self.statusBar().addPermanentWidget(self.save_label)
        self.statusBar().addPermanentWidget(self.annotator_label)
        from desktop.ui.window_fit import initial_size
        self.resize(*initial_size(self, 1580, 960))

    def _welcome_page(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.addStretch(1)
        text = QLabel(
            "<h2>This database has no items yet</h2>"
            "<p>Bring RACE, EMBRACE or ExpMRC items in with <b>File → Import…</b> (Ctrl+O), "
            "or from a terminal:</p>"
            f"<pre>  mcqlens import FILE --db {html.escape(str(self.backend.path))}</pre>"
            "<p>Every edit is saved the moment you make it; Ctrl+Z undoes, also after a restart.</p>"
            "<p>To look around first, load six demo questions written for MCQ Lens.</p>")
        text.setTextFormat(Qt.RichText)
        text.setAlignment(Qt.AlignCenter)
        lay.addWidget(text)
        row = QHBoxLayout()
        row.addStretch(1)
        imp = QPushButton("Import a file…")
        imp.setToolTip("Import RACE, EMBRACE, ExpMRC, DREAM or QuAIL items into this database")
        imp.clicked.connect(lambda: self.choose_import())
        demo = QPushButton("Load the demo items")
        demo.setToolTip("Six demo questions written for MCQ Lens, to look around first")
        demo.clicked.connect(self.load_demo)
        row.addWidget(imp)
        row.addWidget(demo)
        row.addStretch(1)
        lay.addLayout(row)
        lay.addStretch(2)
        return page

    def _build_menus(self) -> None:
        def action(menu, text, slot, keys=()):
            a = QAction(text, self)
            if keys:
                a.setShortcuts([QKeySequence(k) for k in keys])
                a.setShortcutContext(Qt.WindowShortcut)
            a.triggered.connect(slot)
            menu.addAction(a)
            return a

        file_menu = self.menuBar().addMenu("&File")
        action(file_menu, "&Import…", lambda: self.choose_import(), [QKeySequence.Open])
        action(file_menu, "Import a &folder…", lambda: self.choose_import(folder=True))
        action(file_menu, "Load the &demo items", self.load_demo)
        file_menu.addSeparator()
        action(file_menu, "&Quit", self.close, [QKeySequence.Quit])
        edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = action(edit_menu, "&Undo", self.undo, ["Ctrl+Z"])
        self.redo_action = action(edit_menu, "&Redo", self.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])
        mark = self.menuBar().addMenu("&Mark")
        self.mark_menu = mark
        # The letter keys act in the passage view only, so typing a comment never marks text.
        action(mark, "Evidence\tE", lambda: self._mark_button(EVIDENCE))
        self._basis_actions: list[QAction] = []
        self._basis_menu_anchor = action(mark, "Required paragraphs\tP", lambda: self._mark_button(REQUIRED))
        self._basis_menu_rows(4)
        action(mark, "Remove the selected span\tDel", self._remove_selected)
        go = self.menuBar().addMenu("&Go")
        action(go, "&Next item", self.next_item, ["Alt+Down"])
        action(go, "&Previous item", self.previous_item, ["Alt+Up"])
        action(go, "Next &unfinished item", self.next_unfinished, ["Ctrl+J"])
        action(go, "Mark &done, go to next unfinished", self.done_and_next, ["Ctrl+Return", "Ctrl+Enter"])
        action(go, "&Search", lambda: self.navigator.search.setFocus(), [QKeySequence.Find])

    # ================================================================ items
    def reload_items(self, select: str | None = None) -> None:
        rows = self.backend.items()
        if not rows:
            self.pages.setCurrentWidget(self.welcome)
            self.current, self.state = None, None
            return
        self.pages.setCurrentWidget(self.work)
        self._share_width()
        self.navigator.set_rows(rows)
        target = select or self.current or rows[0].item_id
        if self.navigator.model.row_of(target) is None:
            target = rows[0].item_id
        self.current = None
        self.navigator.select(target)
        if self.current != target:  # selecting an already current index emits nothing
            self.open_item(target)
        if self._want_facts:
            self.start_facts()

    def open_item(self, item_id: str) -> None:
        if item_id == self.current and self.state is not None:
            return
        self.flush()
        row = self.navigator.model.row_of(item_id)
        try:
            state = self.backend.load(item_id, status=row.status if row else "untouched")
        except McqLensError as exc:
            self._error(str(exc))
            return
        self.current = item_id
        self.state = state
        if self.navigator.current != item_id:
            self.navigator.select(item_id, emit=False)
        self._render(new_item=True)

    def _render(self, new_item: bool = False) -> None:
        st = self.state
        q = st.question
        if new_item:
            self.passage.set_passage(st.passage_text, q.spans, len(q.alternatives))
            self.question_view.set_question(q, st.passage_text)
            self._basis_button_row(len(q.alternatives))
        else:
            keep = self.passage.selected_span()
            self.passage.set_spans(q.spans)
            if keep is not None:
                self.passage.select_span(keep.id)
            self.question_view.update_counts(q)
        owner = ""
        if st.inherited:
            who = st.reference.annotator if st.reference else "imported"
            owner = (f"{len(st.inherited)} value(s) shown from the assessment of “{who}”; "
                     "choosing a value records your own.")
        self.difficulty.set_values(st.values, owner)
        from desktop.domain import difficulty as km
        from desktop.domain import typology as ty
        worst = ty.item_worst_tier(q.problems)
        eligible, why = km.eligibility(st.text_format, st.unit_type, worst)
        self.difficulty.set_eligibility(eligible, why)
        self.problems.set_item(q.problems, st.note, st.text_format, st.multiple_texts, st.unit_type,
                               n_alternatives=len(q.alternatives))
        from desktop.ui.suggestions import pending
        self.problems.set_suggestions(pending(q, st.passage_text))
        self.comments.set_item(st.own_comments, q.answerability, st.status, st.other_comments, reset=new_item)
        self.setWindowTitle(f"MCQ Lens — {q.id} — {self.backend.path}")
        if getattr(self, "model_review", None) is not None:
            self.model_review.show(st, new_item)

    def _basis_menu_rows(self, n: int) -> None:
        """The Mark menu's "Basis of A … E" entries, one per alternative of the item, with their keys."""
        from desktop.ui.mark_keys import basis_key
        if len(self._basis_actions) == n:
            return
        for a in self._basis_actions:
            self.mark_menu.removeAction(a)
            a.deleteLater()
        self._basis_actions = []
        for i in range(n):
            a = QAction(f"Basis of {letter(i)}\t{basis_key(i)}", self)
            a.triggered.connect(lambda _=False, i=i: self._mark_button(BASIS, i))
            self.mark_menu.insertAction(self._basis_menu_anchor, a)
            self._basis_actions.append(a)

    def _basis_button_row(self, n: int) -> None:
        self._basis_menu_rows(n)
        if self._basis_buttons.count() == n:
            return
        while self._basis_buttons.count():
            w = self._basis_buttons.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        from desktop.ui.mark_keys import basis_button_text, basis_tooltip
        t = colors.theme()
        for i in range(n):
            b = QToolButton()
            b.setText(basis_button_text(i))
            b.setToolTip(basis_tooltip(i))
            b.setAccessibleName(f"Basis of alternative {letter(i)}")
            b.setAccessibleDescription(basis_tooltip(i))
            b.setStyleSheet(f"QToolButton {{ background: {t.alternative_fill(i)}; color: {t.on_alternative(i)};"
                            " font-weight: bold; border-radius: 3px; padding: 3px 6px; }")
            b.setFocusPolicy(Qt.NoFocus)
            b.clicked.connect(lambda _=False, i=i: self._mark_button(BASIS, i))
            self._basis_buttons.addWidget(b)

    # ================================================================ editing
    def edit(self, field: str, value: Any) -> int | None:
        """Store one change of the current item at once; returns its history id (None: refused)."""
        if self.current is None:
            return None
        if field not in ("comment", "comments", "note"):
            # Text still being typed goes in first: the refresh below redraws the panels.
            self.flush()
        if self.current is None or self.state is None:
            return None
        item = self.current
        words = self._words(field, value)
        # What the widget showed: another window's edit since then refuses this one (StaleEditError).
        expect = self.backend.shown(self.state, field, value)
        try:
            hid = self.backend.apply(item, field, value, expect)
        except StaleEditError as exc:
            self._refused_stale(item, field, value, exc)
            return None
        except McqLensError as exc:
            if "locked by another program" in str(exc):
                self._refused_locked(item, field, value, exc)
            elif not self._already_gone(item, field, value):
                self._error(f"Not saved: {exc}")
                self._safe_refresh()
            return None
        self._saved(hid, words)
        if self.banner.item == item:  # a newer edit of the item: the old offer would undo it
            self.banner.clear()
        self._refresh()
        return hid

    # ---- other windows and programs on the same database ---------------------------------------
    def _refused_stale(self, item: str, field: str, value: Any, exc: StaleEditError) -> None:
        """Nothing was overwritten: show what is stored now, say who changed it, offer to apply mine."""
        self._safe_refresh()
        who = (f"{exc.by['annotator']} at {when(exc.by['ts'])}" if exc.by else "another window or program")
        if field.startswith(("span.", "problem.")) and exc.current is None:
            kind = "span" if field.startswith("span.") else "problem tag"
            self._warn(f"Not saved: this {kind} of {item} was removed by {who} (another window or program).")
            return
        self._warn(f"Not saved: {field} of {item} was changed by {who} in another window or program; "
                   f"it now reads {describe(field, exc.current)} (shown). Yours was {describe(field, value)}.",
                   "Apply mine anyway", lambda: self._again(item, field, value), item)

    def _refused_locked(self, item: str, field: str, value: Any, exc: McqLensError) -> None:
        self._warn(f"Not saved: {exc}. Another program is writing to this database; "
                   "try again when it has finished.", "Try again", lambda: self._again(item, field, value), item)
        self.last_error = self.banner.text
        self._safe_refresh()

    def _already_gone(self, item: str, field: str, value: Any) -> bool:
        """A span or tag removed by another window meanwhile: say so (and by whom), not 'error'."""
        if field not in ("span.remove", "span.update", "problem.remove") or not isinstance(value, dict):
            return False
        self._safe_refresh()
        kind = field.split(".", 1)[0]
        rows = self.state.question.spans if kind == "span" else self.state.question.problems
        if any(r.id == value.get("id") for r in rows):
            return False
        try:
            h = self.backend.removed_by(item, field, value.get("id"))
        except McqLensError:
            h = None
        who = f" by {h.annotator} at {when(h.ts)}" if h is not None else ""
        what = "span" if kind == "span" else "problem tag"
        self._warn(f"Nothing to do: this {what} was already removed{who} (another window or program).")
        return True

    def _again(self, item: str, field: str, value: Any) -> None:
        """Re-apply a refused edit on what is shown now: the later edit wins, the earlier stays in history."""
        if self.current != item and not self.go_to(item):
            return
        self.edit(field, value)

    def _warn(self, text: str, action: str | None = None, then=None, item: str | None = None) -> None:
        self.banner.warn(text, action, then, item)
        self.save_label.setText(f"<span style='color:{colors.theme().error}'>✗ not saved</span> "
                                "(see the message above the passage)")
        self.statusBar().showMessage(text, 15000)

    def tell(self, text: str) -> None:
        self.last_message = text
        self.statusBar().showMessage(text, 10000)

    def typing(self) -> bool:
        return self.comments.comment.is_dirty() or self.problems.note.is_dirty()

    def refresh_current(self) -> None:
        self._refresh()

    def refresh_rows(self, items: list[str]) -> None:
        """Navigator rows (status, counts) of items edited elsewhere; selection and scroll stay."""
        passages = {}
        for item in items:
            row = self.navigator.model.row_of(item)
            if row is not None:
                passages[item] = row.passage_id
        if not passages:
            return
        for item, fresh in self.backend.item_rows(list(passages), passages).items():
            self.navigator.update_row(item, status=fresh.status, n_evidence=fresh.n_evidence,
                                      n_bases=fresh.n_bases, n_problems=fresh.n_problems,
                                      answerability=fresh.answerability)

    def _safe_refresh(self) -> None:
        try:
            self._refresh()
        except McqLensError as exc:
            self.statusBar().showMessage(str(exc), 15000)

    def _words(self, field: str, value: Any) -> str:
        """The edit as the annotator would say it ("basis of B added"), read before it is stored."""
        from desktop.ui.change_words import words
        old = None
        if isinstance(value, dict) and "id" in value and self.state is not None:
            rows = self.state.question.spans if field.startswith("span.") else self.state.question.problems
            hit = next((r for r in rows if r.id == value["id"]), None)
            old = dict(vars(hit)) if hit is not None else None
            if field == "span.update" and old is not None:
                value = {**old, **value}
        return "Saved: " + words(field, value, old)

    def _saved(self, hid: int, what: str) -> None:
        self.last_saved = hid
        if getattr(self, "watcher", None) is not None:
            self.watcher.mark_own(hid)
        ok = colors.theme().ok
        head, _, rest = what.partition(": ")
        self.save_label.setText(f"<span style='color:{ok}'>✓ {html.escape(head)}:</span> {html.escape(rest)}")
        self.save_label.setToolTip(f"{what} (history #{hid}; Ctrl+Z undoes)")

    def _typing(self) -> None:
        self.save_label.setText(f"<span style='color:{colors.theme().warn}'>● typing… (saved when you pause)</span>")

    def _refresh(self, item_id: str | None = None) -> None:
        """Reload the current item from the store, and its navigator row."""
        item_id = item_id or self.current
        if item_id is None:
            return
        row = self.navigator.model.row_of(item_id)
        passage_id = row.passage_id if row else self.state.question.passage_id
        fresh = self.backend.item_row(item_id, passage_id)
        if fresh is not None:
            self.navigator.update_row(item_id, status=fresh.status, n_evidence=fresh.n_evidence,
                                      n_bases=fresh.n_bases, n_problems=fresh.n_problems,
                                      answerability=fresh.answerability)
        if item_id != self.current:
            return
        self.state = self.backend.load(item_id, status=fresh.status if fresh else self.state.status)
        self._render()
        self._update_facts_for(self.state)

    def flush(self) -> None:
        """Commit text still being typed (before leaving an item or closing)."""
        if self.current is not None:
            self.problems.flush()
            self.comments.flush()

    def _mark(self, role: str, alternative: int, start: int, end: int) -> None:
        value: dict[str, Any] = {"role": role, "start": start, "end": end}
        if alternative >= 0:
            value["alternative"] = alternative
        self.edit("span.add", value)

    def _mark_button(self, role: str, alternative: int | None = None) -> None:
        if not self.passage.mark(role, alternative):
            self.statusBar().showMessage("Select some text in the passage first.", 4000)
        self.passage.setFocus()

    def _update_span(self, span_id: int, start: int, end: int) -> None:
        if self.edit("span.update", {"id": span_id, "start": start, "end": end}) is not None:
            self.passage.select_span(span_id)

    def _remove_selected(self) -> None:
        span = self.passage.selected_span()
        if span is not None and span.id is not None:
            self.edit("span.remove", {"id": span.id})

    def _span_selected(self, span) -> None:
        self.remove_button.setEnabled(span is not None)
        if span is None or self.state is None:
            self.span_info.setText("")
            return
        what = {EVIDENCE: "evidence", REQUIRED: "required paragraphs"}.get(span.role, "")
        if span.role == BASIS and span.alternative is not None:
            what = f"basis of {letter(span.alternative)}"
        self.span_info.setText(f"selected: {what} [{span.start}–{span.end}] by {span.annotator} · "
                               "Shift+←/→ end, Ctrl+Shift+←/→ start")

    def _tag_toggled(self, type_key: str, element: str, checked: bool) -> None:
        if checked:
            self.edit("problem.add", {"type": type_key, "element": element})
            return
        for tag in [p for p in self.state.question.problems if p.type == type_key and p.element == element
                    and p.alternative is None and p.origin != "model"]:
            if tag.id is not None:
                self.edit("problem.remove", {"id": tag.id})

    def _alternative_tag_toggled(self, type_key: str, element: str, alternative: int, checked: bool) -> None:
        """A problem in one alternative only (a spelling error in C)."""
        if checked:
            self.edit("problem.add", {"type": type_key, "element": element, "alternative": alternative})
            return
        for tag in [p for p in self.state.question.problems if p.type == type_key and p.element == element
                    and p.alternative == alternative and p.origin != "model"]:
            if tag.id is not None:
                self.edit("problem.remove", {"id": tag.id})

    def _suggestion_answered(self, tag, accept: bool) -> None:
        """Accept (store the tag as model-accepted) or dismiss (store that it was seen and is fine)."""
        from desktop.ui.suggestions import change_value
        self.edit("problem.add", change_value(tag, len(self.state.passage_text), accept))

    def _suggestion_chosen(self, tag) -> None:
        """A suggestion in the passage: select what it found, so it can be seen (and marked)."""
        if tag.element == "text" and tag.start is not None and tag.end is not None:
            self.passage.set_selection(tag.start, tag.end)
            self.passage.ensureCursorVisible()

    # ================================================================ undo, navigation
    def undo(self) -> None:
        self._history_step(self.backend.undo, "undone")

    def redo(self) -> None:
        self._history_step(self.backend.redo, "redone")

    def _history_step(self, fn, verb: str) -> None:
        self.flush()
        try:
            row = fn()
        except McqLensError as exc:
            self._error(str(exc))
            return
        if row is None:
            self.statusBar().showMessage(f"Nothing to be {verb}.", 3000)
            return
        from desktop.ui.change_words import history_words
        self._saved(row.id, history_words(row))
        if row.item and row.item != self.current:
            self._refresh(row.item)
            self.navigator.select(row.item)
        else:
            self._refresh()

    def next_item(self) -> None:
        self.flush()
        if self.navigator.next_item() is None:
            self.statusBar().showMessage("This is the last item shown.", 3000)
        self.passage.setFocus()

    def previous_item(self) -> None:
        self.flush()
        if self.navigator.previous_item() is None:
            self.statusBar().showMessage("This is the first item shown.", 3000)
        self.passage.setFocus()

    def next_unfinished(self) -> None:
        self.flush()
        if self.navigator.next_unfinished() is None:
            self.statusBar().showMessage("Every item shown is done.", 5000)
        self.passage.setFocus()

    def done_and_next(self) -> None:
        if self.current is not None and self.edit("status", "done") is not None:
            self.next_unfinished()

    def go_to(self, item_id: str) -> bool:
        if self.navigator.model.row_of(item_id) is None:
            return False
        self.navigator.select(item_id)
        if self.current != item_id:
            self.open_item(item_id)
        return True

    # ================================================================ facts for the filters
    def start_facts(self) -> None:
        annotator = self.backend.annotator
        backend = self.backend

        def work(progress):
            return compute_facts(backend.load_all(), annotator)

        self.facts_runner.start(work)

    def _facts_ready(self, facts: dict) -> None:
        self.navigator.set_facts(facts)

    def _update_facts_for(self, st: ItemState) -> None:
        if not self.navigator.model.facts:
            return
        ds = Dataset(source=st.question.source,
                     passages=[Passage(id=st.question.passage_id, text="", questions=[st.question])])
        self.navigator.model.facts.update(compute_facts([ds], self.backend.annotator))

    # ================================================================ import
    def choose_import(self, folder: bool = False) -> None:
        start = str(self.settings.value("last_import_dir", "")) if self.settings is not None else ""
        if folder:  # RACE ships as folders of one .txt per passage
            path = QFileDialog.getExistingDirectory(self, "Import a folder of RACE files", start)
        else:
            path, _ = QFileDialog.getOpenFileName(self, "Import items (RACE, EMBRACE, ExpMRC, …)", start,
                                                  IMPORT_FILTER)
        if path:
            if self.settings is not None:
                import os
                self.settings.setValue("last_import_dir", path if folder else os.path.dirname(path))
            self.import_file(path)

    def import_file(self, path: str) -> None:
        """Read `path` in a worker thread, then store it here on the GUI thread."""
        if self.importing:
            return
        self.flush()
        self.importing = True
        self._import_path = path
        self._import_started = time.perf_counter()
        self._progress = QProgressDialog(f"Reading {path}…", "Cancel", 0, PROGRESS_STEPS, self)
        self._progress.setAutoReset(False)  # full bar while storing; closed by _import_done
        self._progress.setAutoClose(False)
        self._progress.setWindowTitle("Import")
        self._progress.setMinimumDuration(0)
        self._progress.canceled.connect(self._import_cancel)
        self._progress.show()
        self.import_runner.start(read_file, path)

    def _import_progress(self, text: str) -> None:
        if self._progress is not None:
            self._progress.setLabelText(text)

    def _import_advanced(self, done: float, total: int, records: int) -> None:
        """Files read of the files to read (fractional within a JSON-lines file), records read."""
        if self._progress is None:
            return
        self._progress.setValue(int(PROGRESS_STEPS * min(done / max(total, 1), 1.0)))
        where = f"file {min(int(done) + 1, total)} of {total}" if total > 1 else os.path.basename(self._import_path)
        self._progress.setLabelText(f"Reading {where}: {records} records read" if records else f"Reading {where}…")

    def _import_cancel(self) -> None:
        self.import_runner.cancel()
        self._import_done("Import cancelled; nothing was stored.")

    def _import_read(self, datasets) -> None:
        if self._progress is not None:
            n = sum(1 for d in datasets for _ in d.questions())
            self._progress.setValue(PROGRESS_STEPS)
            self._progress.setLabelText(f"Storing {n} questions…")
            self._progress.setCancelButton(None)  # one transaction on this thread: nothing to stop midway
            from PySide6.QtWidgets import QApplication
            QApplication.processEvents()
        try:
            result = self.backend.import_datasets(datasets, self._import_path)
        except McqLensError as exc:
            self._import_failed(exc)
            return
        self._import_done(result.summary())
        self.reload_items(select=self.current)

    def _import_failed(self, exc) -> None:
        message = str(exc) if isinstance(exc, McqLensError) else f"{type(exc).__name__}: {exc}"
        self._import_done(None)
        self._error(f"Import failed — {message}", title="Import failed")

    def _import_done(self, message: str | None) -> None:
        self.importing = False
        if self._progress is not None:
            self._progress.canceled.disconnect(self._import_cancel)
            self._progress.close()
            self._progress = None
            self.activateWindow()
        if message:
            self._info(message)

    def load_demo(self) -> None:
        from desktop.ui.demo_data import demo_dataset
        try:
            result = self.backend.import_datasets([demo_dataset()], None)
        except McqLensError as exc:
            self._error(str(exc))
            return
        self._info(result.summary().replace("datasets:", "demo items:"))
        self.reload_items()

    # ================================================================ messages, closing
    def _info(self, text: str) -> None:
        self.last_message = text
        self.statusBar().showMessage(text, 10000)

    def _error(self, text: str, title: str = "MCQ Lens") -> None:
        self.last_error = text
        self.statusBar().showMessage(text, 15000)
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self)
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
        nav, tabs = int(w * 0.2), int(w * 0.27)
        self.work.setSizes([nav, w - nav - tabs, tabs])

    def closeEvent(self, event):
        self.flush()
        self.facts_runner.cancel()
        self.import_runner.cancel()
        self.facts_runner.wait(5)
        super().closeEvent(event)

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
        from PySide6.QtWidgets import QApplication
        if getattr(self, "model_review", None) is not None:
            self.model_review.settle()  # the model panel shows the item's scores, not "loading"
        for _ in range(3):
            QApplication.processEvents()
        if not self.grab().save(path):
            raise McqLensError(f"cannot write the screenshot {path}")
