"""Workbench polish driven through the real widgets (pytest-qt, offscreen): a determinate,
cancellable import; problem tags on one alternative; comments as a list; the surface
linter's suggestions.  Expected numbers come from the input files."""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402
from desktop.ui.menus.file import PROGRESS_STEPS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EMBRACE = ROOT.parent / "shared" / "data" / "embrace"
GREEN = EMBRACE / "embrace_green.jsonl"
YELLOW = EMBRACE / "embrace_yellow.jsonl"


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def _open(qtbot, db: Path, annotator: str = "anna") -> MainWindow:
    window = MainWindow(Backend.open(str(db), annotator=annotator), facts=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def _close(window: MainWindow) -> None:
    window.close()
    window.backend.close()


def _watch_progress(window: MainWindow) -> list[tuple[int, int, str]]:
    """(value, maximum, label) of the import dialog after each of the reader's reports."""
    seen: list[tuple[int, int, str]] = []

    def spy(*_):
        dlg = window.file_menu._progress
        if dlg is not None:
            seen.append((dlg.value(), dlg.maximum(), dlg.labelText()))

    window.file_menu.import_runner.advanced.connect(spy)  # after the window's own slot: sees its result
    return seen


def test_import_bar_counts_files_and_records(qtbot, tmp_path, monkeypatch):
    from desktop.ui.kit.workers import Runner
    monkeypatch.setattr(Runner, "ADVANCE_EVERY_S", 0.0)  # every report, however fast the machine reads
    window = _open(qtbot, tmp_path / "a.db")
    seen = _watch_progress(window)
    window.file_menu.import_file(str(EMBRACE))  # a folder: green and yellow
    qtbot.waitUntil(lambda: not window.importing, timeout=30000)
    assert window.last_error == ""
    records = len(_lines(GREEN)) + len(_lines(YELLOW))
    assert seen, "the reader reported no progress"
    assert all(maximum == PROGRESS_STEPS for _v, maximum, _l in seen)  # determinate from the start
    values = [v for v, _m, _l in seen]
    assert values == sorted(values)
    assert any(0 < v < PROGRESS_STEPS // 2 for v in values)  # inside the first file
    assert any(PROGRESS_STEPS // 2 <= v < PROGRESS_STEPS for v in values)  # inside the second
    assert values[-1] == PROGRESS_STEPS
    assert any(label.startswith("Reading file 1 of 2") for _v, _m, label in seen)
    assert any(label.startswith("Reading file 2 of 2") for _v, _m, label in seen)
    assert seen[-1][2].endswith(f"{records} records read")
    n_questions = sum(line.count('"mcq"') for p in (GREEN, YELLOW) for line in _lines(p))
    assert len(window.backend.items()) == n_questions
    assert "added" in window.last_message
    _close(window)


def test_import_cancel_stops_the_reader_and_stores_nothing(qtbot, tmp_path, monkeypatch):
    import threading

    from desktop.ui.kit.workers import Runner
    monkeypatch.setattr(Runner, "ADVANCE_EVERY_S", 0.0)
    window = _open(qtbot, tmp_path / "b.db")
    first_reports: list[float] = []
    clicked = threading.Event()  # the reader waits at its first record until Cancel was clicked

    def cancel_on_first_record(done, total, records):
        if records and not first_reports:
            first_reports.append(done)
            from PySide6.QtWidgets import QPushButton
            button = window.file_menu._progress.findChild(QPushButton)
            assert button.text() == "Cancel"
            button.click()
            clicked.set()

    window.file_menu.import_runner.advanced.connect(cancel_on_first_record)
    results: list = []
    window.file_menu.import_runner.finished.connect(results.append)
    window.file_menu.import_runner.failed.connect(results.append)
    stopped: list = []
    from desktop.ui.menus import file as menu_file
    from desktop.ui.kit.workers import Cancelled
    real_read = menu_file.read_file

    def read_and_watch(path, progress=None):
        def gated(*values):
            progress(*values)
            if len(values) == 3 and values[2] >= 1:
                clicked.wait(10)

        try:
            return real_read(path, progress=gated)
        except Cancelled:
            stopped.append(path)
            raise

    menu_file.read_file = read_and_watch
    try:
        window.file_menu.import_file(str(YELLOW))
        qtbot.waitUntil(lambda: not window.importing, timeout=30000)
        assert first_reports and first_reports[0] < 1
        qtbot.waitUntil(lambda: not window.file_menu.import_runner.busy, timeout=30000)
    finally:
        menu_file.read_file = real_read
    assert stopped == [str(YELLOW)]  # the reader stopped inside the file
    qtbot.wait(50)
    assert results == []  # neither a result nor an error reached the window
    assert window.last_message == "Import cancelled; nothing was stored."
    assert window.last_error == ""
    assert window.backend.items() == []
    assert window.pages.currentWidget() is window.welcome
    # The next import after a cancel works.
    window.file_menu.import_file(str(GREEN))
    qtbot.waitUntil(lambda: not window.importing, timeout=30000)
    assert len(window.backend.items()) == sum(line.count('"mcq"') for line in _lines(GREEN))
    _close(window)


def _window_on(qtbot, tmp_path, path: Path = GREEN, annotator: str = "anna") -> MainWindow:
    from desktop import formats
    backend = Backend.open(str(tmp_path / "w.db"), annotator=annotator)
    backend.store.import_datasets(formats.read(path), file=str(path))
    window = MainWindow(backend, facts=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_problem_tag_on_one_alternative(qtbot, tmp_path):
    import json
    first = json.loads(_lines(GREEN)[0])["test"][0]
    window = _window_on(qtbot, tmp_path)
    assert window.go_to(first["id"])
    assert window.state.question.problems == []  # green items have none
    window.tabs.setCurrentWidget(window.problems)
    panel = window.problems
    n = len(first["mcq"]["choices"])
    letters = panel.letters[("spelling_errors", "alternatives")]
    assert [b.isVisibleTo(panel) for b in letters.buttons] == [i < n for i in range(5)]
    assert ("spelling_errors", "text") not in panel.letters  # the passage has no alternatives

    panel.letter_button("spelling_errors", "alternatives", 2).click()  # a spelling error in C
    mine = window.backend.store.question(first["id"], annotator="anna").problems
    assert [(p.type, p.element, p.alternative, p.annotator) for p in mine] == [
        ("spelling_errors", "alternatives", 2, "anna")]
    assert panel.letter_button("spelling_errors", "alternatives", 2).isChecked()
    assert not panel.letter_button("spelling_errors", "alternatives", 1).isChecked()
    leaf = panel._items[("spelling_errors", "alternatives")]
    assert leaf.checkState(0) == Qt.Unchecked  # the whole element is not tagged
    text = panel.acceptability.text()
    from desktop.domain import typology as ty
    expected = ty.acceptability_of_tier(ty.tier("spelling_errors"))  # Appendix B's tier of the type
    assert text.startswith(f"<b>{expected}</b>") and f">C</b>: {ty.TYPES['spelling_errors'].name}" in text
    assert "(1 ticked)" in panel._tops["alternatives"].text(0)

    # the whole element as well, then C taken off again: the whole-element tag stays
    panel.set_checked("spelling_errors", "alternatives", True)
    panel.letter_button("spelling_errors", "alternatives", 2).click()
    mine = window.backend.store.question(first["id"], annotator="anna").problems
    assert [(p.type, p.element, p.alternative) for p in mine] == [("spelling_errors", "alternatives", None)]
    assert not panel.letter_button("spelling_errors", "alternatives", 2).isChecked()
    # undo brings the tag in C back, shown on its button
    window.edit_menu.undo()
    assert panel.letter_button("spelling_errors", "alternatives", 2).isChecked()
    _close(window)


def test_comments_are_a_list_added_edited_and_deleted_one_by_one(qtbot, tmp_path):
    import json

    from PySide6.QtTest import QTest
    first = json.loads(_lines(GREEN)[0])["test"][0]
    window = _window_on(qtbot, tmp_path)
    assert window.go_to(first["id"])
    window.tabs.setCurrentWidget(window.comments)
    panel = window.comments
    store = window.backend.store

    def stored():
        return store.question(first["id"], annotator="anna").comments

    assert stored() == [] and not panel.list.isVisible()
    panel.comment.setFocus()
    QTest.keyClicks(panel.comment, "the stem lacks a comma")
    qtbot.waitUntil(lambda: stored() == ["the stem lacks a comma"], timeout=5000)  # saved when typing pauses
    panel.add_button.click()
    assert panel.comment.toPlainText() == "" and panel.editing_label.text() == "New comment:"
    QTest.keyClicks(panel.comment, "distractor D is too long")
    panel.list.setFocus()  # leaving the box saves it
    assert stored() == ["the stem lacks a comma", "distractor D is too long"]
    assert [panel.list.item(i).text() for i in range(panel.list.count())] == [
        "1. the stem lacks a comma", "2. distractor D is too long"]
    assert panel.heading.text() == "Comments (2)"

    # edit the first one: the second stays as it is
    panel.list.setCurrentRow(0)
    assert panel.comment.toPlainText() == "the stem lacks a comma"
    panel.comment.setFocus()
    QTest.keyClick(panel.comment, Qt.Key_End, Qt.ControlModifier)
    QTest.keyClicks(panel.comment, " after 'however'")
    panel.flush()
    assert stored() == ["the stem lacks a comma after 'however'", "distractor D is too long"]

    # delete the second one
    panel.list.setCurrentRow(1)
    assert panel.editing_label.text() == "Comment 2:"
    panel.delete_button.click()
    assert stored() == ["the stem lacks a comma after 'however'"]
    assert panel.list.count() == 1 and panel.comment.toPlainText() == ""
    # each step is one history row of the comments field; undo brings the deleted one back
    window.edit_menu.undo()
    assert stored() == ["the stem lacks a comma after 'however'", "distractor D is too long"]
    assert panel.list.count() == 2
    _close(window)


def test_linter_suggestions_accept_and_dismiss(qtbot, tmp_path):
    import json

    from desktop.domain import surface_lint
    from desktop.domain import typology as ty
    # the first item of the file with at least three suggestions, one of them in an alternative
    recs = [json.loads(line) for line in _lines(YELLOW)]
    from desktop import formats
    questions = {q.id: q for ds in formats.read(YELLOW) for q in ds.questions()}
    rec, item = next((r, t["id"]) for r in recs for t in r["test"]
                     if len(found := surface_lint.detect(questions[t["id"]], r["text"])) >= 3
                     and any(f.alternative is not None for f in found) and found[0].element == "text")
    window = _window_on(qtbot, tmp_path, YELLOW)
    assert window.go_to(item)
    window.tabs.setCurrentWidget(window.problems)
    panel = window.problems
    q = window.state.question
    linted = surface_lint.detect(q, rec["text"])  # the linter on the file's own passage
    assert any(t.alternative is not None for t in linted)
    assert any(r.suggestion.where.startswith("alternative ") for r in panel.suggestion_rows)
    assert len(panel.suggestion_rows) == len(linted)
    assert f"({len(linted)})" in panel.suggestions_title.text()
    first, second = panel.suggestion_rows[0].suggestion.tag, panel.suggestion_rows[1].suggestion.tag
    assert (first.type, first.element, first.start, first.end) == (
        linted[0].type, linted[0].element, linted[0].start, linted[0].end)
    if first.element == "text":  # the found stretch is quoted from the passage
        found = rec["text"][first.start:first.end].replace(" ", "␣")
        assert found in panel.suggestion_rows[0].label.text()
        panel.suggestions.setCurrentRow(0)  # clicking it selects it in the passage
        assert window.passage.selection() == (first.start, first.end)
    acceptability_before = panel.acceptability.text()

    panel.suggestion_rows[0].accept.click()
    store = window.backend.store
    accepted = [p for p in store.question(item, annotator="anna").problems if p.origin == "model-accepted"]
    assert [(p.type, p.element, p.alternative, p.start, p.end, p.annotator) for p in accepted] == [
        (first.type, first.element, first.alternative, first.start, first.end, "anna")]
    assert len(panel.suggestion_rows) == len(linted) - 1
    # an accepted suggestion counts like any tag
    assert ty.acceptability(window.state.question.problems) != ty.ACCEPTABLE

    # dismissing: gone from the list, stored, and it changes nothing of the acceptability
    acceptability_after_accept = panel.acceptability.text()
    row = next(r for r in panel.suggestion_rows if r.suggestion.tag.start == second.start
               and r.suggestion.tag.type == second.type)
    row.dismiss.click()
    assert len(panel.suggestion_rows) == len(linted) - 2
    assert panel.acceptability.text() == acceptability_after_accept
    dismissed = [p for p in store.question(item, annotator="anna").problems
                 if p.origin == "model" and p.extra.get("dismissed")]
    assert [(p.type, p.start, p.end) for p in dismissed] == [(second.type, second.start, second.end)]
    assert acceptability_before  # shown before any answer

    # both answers hold after a restart; undo brings the dismissed suggestion back
    path = window.backend.path
    _close(window)
    window = MainWindow(Backend.open(path, annotator="anna"), facts=False)
    qtbot.addWidget(window)
    assert window.go_to(item)
    assert len(window.problems.suggestion_rows) == len(linted) - 2
    window.edit_menu.undo()
    assert len(window.problems.suggestion_rows) == len(linted) - 1
    _close(window)
