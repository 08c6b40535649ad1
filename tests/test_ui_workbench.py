"""The workbench driven through its real widgets (pytest-qt, offscreen): the annotator's story.

Import EMBRACE green, select a phrase, press 2, fill the difficulty form, undo,
close, reopen on the same database, and find everything there.  Expected
numbers come from the input file and from Appendix A of the EMBRACE paper.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from desktop.domain.model import BASIS, EVIDENCE, HUMAN  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


def _records():
    with open(GREEN, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _open(qtbot, db: Path, annotator: str = "anna") -> MainWindow:
    window = MainWindow(Backend.open(str(db), annotator=annotator), facts=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    return window


def _close(window: MainWindow) -> None:
    window.close()
    window.backend.close()


def _drag(qtbot, view, start: int, end: int) -> None:
    """Select passage text with the mouse, from character `start` to character `end`."""
    vp = view.viewport()
    a, b = view.point_of(start).toPoint(), view.point_of(end).toPoint()
    QTest.mousePress(vp, Qt.LeftButton, Qt.NoModifier, a)
    for k in range(1, 5):
        QTest.mouseMove(vp, a + (b - a) * k / 4)
    QTest.mouseRelease(vp, Qt.LeftButton, Qt.NoModifier, b)


def _import(qtbot, window: MainWindow, path: Path) -> None:
    window.file_menu.import_file(str(path))
    qtbot.waitUntil(lambda: not window.importing, timeout=20000)
    # the progress dialog took the focus; shortcuts act in the active window only
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def test_annotator_story_survives_close_and_reopen(qtbot, tmp_path):
    records = _records()
    n_questions = sum(len(r["test"]) for r in records)
    first = records[0]
    text, q0 = first["text"], first["test"][0]
    db = tmp_path / "annotations.db"

    window = _open(qtbot, db)
    assert window.pages.currentWidget() is window.welcome  # empty database: says how to import
    _import(qtbot, window, GREEN)
    assert window.last_error == ""
    assert len(window.navigator.visible_items()) == n_questions
    assert f"0 of {n_questions} done" in window.navigator.progress.text()
    assert window.go_to(q0["id"])
    assert window.state.passage_text == text

    # --- select a phrase with the mouse (partial words at both ends), press 2: basis of B
    phrase = "Some parents are at their best before their children begin to speak."
    start = text.index(phrase)
    end = start + len(phrase)
    _drag(qtbot, window.passage, start + 2, end - 3)  # "me parents ... to spe"
    assert window.passage.selection() == (start, end - 1)  # snapped to whole words, without the full stop
    window.passage.setFocus()
    QTest.keyClick(window.passage, Qt.Key_2)
    stored = window.backend.store.question(q0["id"], annotator="anna")
    mine = [s for s in stored.spans if s.origin == HUMAN]
    assert [(s.role, s.alternative, s.start, s.end, s.annotator) for s in mine] == [
        (BASIS, 1, start, end - 1, "anna")]
    assert text[mine[0].start:mine[0].end] == phrase[:-1]
    assert "saved" in window.save_label.text().lower()
    basis_b = mine[0].id

    # --- the difficulty form: the file's categories are shown; the annotator changes NPar and IC.
    # Appendix A points of the file's values for 0_0: TOI reason 4, TOM both LLTI 3, NPhr 3 -> 2,
    # NI 1 -> 0, NIt specified 0, NPar 1 -> 0, IC compare 0, POD two or more distractors 5, TOC none 0.
    form = window.difficulty
    assert "Total difficulty: 14" in form.total.text()
    npar = form.controls["npar"]
    npar.setCurrentIndex(npar.findData("2+"))
    npar.activated.emit(npar.currentIndex())  # NPar 2+ (1 point)
    ic = form.controls["ic"]
    assert not ic.model().item(ic.findData("compare")).isEnabled()  # IC limited by NPar
    ic.setCurrentIndex(ic.findData("contrast"))
    ic.activated.emit(ic.currentIndex())  # IC contrast (1 point)
    assert "Total difficulty: 16" in form.total.text()
    own = next(a for a in window.backend.store.question(q0["id"], annotator="anna").assessments
               if a.annotator == "anna")
    assert own.values == {"npar": "2+", "ic": "contrast"}

    # --- Ctrl+Z undoes the last edit (IC), Ctrl+Shift+Z redoes it
    QTest.keyClick(window.passage, Qt.Key_Z, Qt.ControlModifier)
    assert "Total difficulty: 15" in form.total.text()
    own = next(a for a in window.backend.store.question(q0["id"], annotator="anna").assessments
               if a.annotator == "anna")
    assert own.values == {"npar": "2+"}
    QTest.keyClick(window.passage, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert "Total difficulty: 16" in form.total.text()

    # --- a problem tag, a comment typed then left by moving to the next item, answerability
    window.tabs.setCurrentWidget(window.problems)
    window.problems.set_checked("punctuation_errors", "question", True)
    assert window.problems.acceptability.text().startswith("<b>mainly acceptable</b>")
    window.tabs.setCurrentWidget(window.comments)
    window.comments.comment.setFocus()
    QTest.keyClicks(window.comments.comment, "stem lacks a comma")
    window.comments._radios["unsure"].click()
    window.go_menu.next_item()
    assert window.current == first["test"][1]["id"]

    _close(window)

    # --- reopen on the same database: everything is there
    window = _open(qtbot, db)
    assert window.go_to(q0["id"])
    q = window.state.question
    span = next(s for s in q.spans if s.id == basis_b)
    assert (span.role, span.alternative, span.start, span.end) == (BASIS, 1, start, end - 1)
    assert basis_b in {s.id for s in window.passage.spans}
    assert "Total difficulty: 16" in window.difficulty.total.text()
    assert window.state.own_comments == ["stem lacks a comma"]
    assert q.answerability == "unsure"
    assert [(p.type, p.element) for p in q.problems if p.annotator == "anna"] == [("punctuation_errors", "question")]
    assert window.navigator.model.row_of(q0["id"]).status == "in progress"
    # undo still works after the restart: the last edit was the answerability
    window.edit_menu.undo()
    assert window.backend.store.question(q0["id"], annotator="anna").answerability is None
    _close(window)


def test_select_adjust_and_delete_a_span(qtbot, tmp_path):
    window = _open(qtbot, tmp_path / "a.db")
    _import(qtbot, window, GREEN)
    record = _records()[0]
    text = record["text"]
    window.go_to(record["test"][0]["id"])
    phrase = "a confusing phrase"
    start = text.index(phrase)
    window.passage.set_selection(start, start + len("a confusing"))
    window.passage.setFocus()
    QTest.keyClick(window.passage, Qt.Key_E)
    span = next(s for s in window.state.question.spans if s.role == EVIDENCE and s.origin == HUMAN)
    assert (span.start, span.end) == (start, start + len("a confusing"))

    # click inside the highlight selects it; Shift+Right takes in the next word and its full stop
    QTest.mouseClick(window.passage.viewport(), Qt.LeftButton, Qt.NoModifier,
                     window.passage.point_of(start + 4).toPoint())
    assert window.passage.selected_span().id == span.id
    QTest.keyClick(window.passage, Qt.Key_Right, Qt.ShiftModifier)
    moved = window.backend.store.question(record["test"][0]["id"]).spans
    moved = next(s for s in moved if s.id == span.id)
    assert text[moved.start:moved.end] == "a confusing phrase."
    # Ctrl+Shift+Right moves the start one word on
    QTest.keyClick(window.passage, Qt.Key_Right, Qt.ShiftModifier | Qt.ControlModifier)
    moved = next(s for s in window.state.question.spans if s.id == span.id)
    assert text[moved.start:moved.end] == "confusing phrase."
    QTest.keyClick(window.passage, Qt.Key_Delete)
    assert span.id not in {s.id for s in window.backend.store.question(record["test"][0]["id"]).spans}
    assert window.passage.selected_span() is None
    _close(window)


def test_navigator_search_filters_progress_and_keys(qtbot, tmp_path):
    window = _open(qtbot, tmp_path / "n.db")
    _import(qtbot, window, GREEN)
    records = _records()
    ids = [q["id"] for r in records for q in r["test"]]
    nav = window.navigator
    assert nav.visible_items() == ids  # file order, grouped by passage

    # search over passage texts: a phrase only in the first passage's text
    nav.search.setText("nuclear\" family")
    QTest.keyClick(nav.search, Qt.Key_Return)
    expected = [q["id"] for r in records if 'nuclear" family' in r["text"] for q in r["test"]]
    assert nav.visible_items() == expected
    nav.search.clear()
    assert nav.visible_items() == ids

    # next / previous / done-and-next-unfinished by keyboard
    window.go_to(ids[0])
    QTest.keyClick(window, Qt.Key_Down, Qt.AltModifier)
    assert window.current == ids[1]
    QTest.keyClick(window, Qt.Key_Up, Qt.AltModifier)
    assert window.current == ids[0]
    window.go_menu.done_and_next()
    assert window.current == ids[1]
    assert f"1 of {len(ids)} done" in nav.progress.text()
    status = nav.filters["status"]
    status.setCurrentIndex(status.findText("done"))
    assert nav.visible_items() == [ids[0]]
    status.setCurrentIndex(0)
    # EMBRACE has bases but no evidence: after marking evidence on one item, the filter finds it alone
    text = records[0]["text"]
    window.passage.set_selection(0, text.index(" can be"))
    window.passage.mark(EVIDENCE)
    spans = nav.filters["spans"]
    spans.setCurrentIndex(spans.findText("has evidence"))
    assert nav.visible_items() == [ids[1]]
    spans.setCurrentIndex(spans.findText("no bases"))
    # in the file, an item without bases has null for every alternative
    assert nav.visible_items() == [q["id"] for r in records for q in r["test"]
                                   if not any((q["annotations"].get("bases") or {}).values())]
    _close(window)


def test_import_error_is_told_in_words(qtbot, tmp_path):
    bad = ROOT / "tests" / "data" / "bad" / "embrace__basis_text_mismatch.jsonl"
    window = _open(qtbot, tmp_path / "e.db")
    _import(qtbot, window, bad)
    assert bad.name in window.last_error and "record" in window.last_error
    assert window.backend.is_empty()  # nothing half-imported
    assert window.pages.currentWidget() is window.welcome
    _close(window)


def test_demo_items_on_first_run(qtbot, tmp_path):
    from desktop.ui.menus.demo_data import demo_dataset
    ds = demo_dataset()
    window = _open(qtbot, tmp_path / "d.db")
    window.file_menu.load_demo()
    n = sum(1 for _ in ds.questions())
    assert len(window.navigator.visible_items()) == n
    assert window.pages.currentWidget() is window.work
    for q in ds.questions():
        stored = window.backend.store.question(q.id)
        assert [(s.role, s.alternative, s.start, s.end) for s in stored.spans] == [
            (s.role, s.alternative, s.start, s.end) for s in q.spans]
    _close(window)


def test_annotator_name_asked_once_and_remembered(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QInputDialog

    from desktop.ui.app import annotator_name
    asked = []

    def fake_get_text(*args, **kwargs):
        asked.append(kwargs.get("text"))
        return "Berit", True

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(fake_get_text))
    s = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    assert annotator_name("osuser", None, s) == "Berit"
    s2 = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    assert annotator_name("osuser", None, s2) == "Berit"
    assert asked == ["osuser"]


def test_difficulty_form_from_scratch_tom_pair_toi_search_and_eligibility(qtbot, tmp_path):
    window = _open(qtbot, tmp_path / "f.db")
    window.file_menu.load_demo()
    item = window.current
    form = window.difficulty
    assert form.total.text().startswith("Total so far: 0")

    # TOI is searchable: part of a concept name finds it
    toi = form.controls["toi"]
    toi.completer().setCompletionPrefix("reas")
    assert toi.completer().currentCompletion().startswith("reason (4 pts)")

    # Appendix A: TOI time 2, TOM literal + synonymous 1, NPhr two 1, NI one 0, NIt unspecified 1,
    # NPar within paragraph 0, IC compare 0, POD literal 1.5, TOC single addition 1  ->  7.5
    for var, value in (("toi", "time"), ("nphr", "2"), ("ni", "1"), ("nit", "unspecified"), ("npar", "1"),
                       ("ic", "compare"), ("pod", "literal"), ("toc", "addition")):
        combo = form.controls[var]
        combo.setCurrentIndex(combo.findData(value))
        combo.activated.emit(combo.currentIndex())
    assert "to score: TOM" in form.total.text()
    form.tom_q.setCurrentIndex(form.tom_q.findData("lm"))
    form.tom_q.activated.emit(form.tom_q.currentIndex())
    form.tom_a.setCurrentIndex(form.tom_a.findData("sm"))
    form.tom_a.activated.emit(form.tom_a.currentIndex())
    assert "Total difficulty: 7.5" in form.total.text()
    assert "one literal, the other synonymous" in form.tom_label.text()
    own = window.backend.store.question(item, annotator="anna").assessments[0]
    assert own.values["tom"] == ["lm", "sm"] and len(own.values) == 9

    # a vocabulary-based MCQ unit is out of the scale's reach: the banner says so
    unit = window.problems.unit_type
    unit.setCurrentIndex(unit.findData("vocabulary"))
    unit.activated.emit(unit.currentIndex())
    assert not form.banner.isHidden()
    assert "Not eligible" in form.banner.text() and "vocabulary" in form.banner.text()
    _close(window)


def test_passage_offsets_stay_python_offsets_with_crlf_and_emoji(qtbot):
    from desktop.ui.item.passage_view import PassageView
    text = "First line.\r\nA smile 😀 then the word target here."
    view = PassageView()
    qtbot.addWidget(view)
    view.set_passage(text, [], 4)
    start = text.index("target")
    view.set_selection(start, start + len("target"))
    assert view.textCursor().selectedText() == "target"
    assert view.selection() == (start, start + len("target"))
    marked = []
    view.markRequested.connect(lambda *a: marked.append(a))
    view.set_selection(start + 2, start + 4)  # "rg": snapped to the whole word
    assert view.mark(EVIDENCE)
    assert marked == [(EVIDENCE, -1, start, start + len("target"))]


def test_keyboard_selection_and_letter_click_mark_spans(qtbot, tmp_path):
    window = _open(qtbot, tmp_path / "k.db")
    window.file_menu.load_demo()
    q = window.state.question
    text = window.state.passage_text
    view = window.passage
    # keyboard only: put the caret before "Ada", extend by characters with Shift+Right, press 1 (basis of A)
    start = text.index("Ada Morel")
    view.set_selection(start, start)
    view.setFocus()
    for _ in range(5):  # "Ada M" -> snapped to "Ada Morel"
        QTest.keyClick(view, Qt.Key_Right, Qt.ShiftModifier)
    QTest.keyClick(view, Qt.Key_1)
    mine = [s for s in window.backend.store.question(q.id, annotator="anna").spans if s.origin == HUMAN]
    assert [(s.role, s.alternative, text[s.start:s.end]) for s in mine] == [(BASIS, 0, "Ada Morel")]

    # the coloured letter in front of alternative D marks the selection as D's basis
    phrase = "blue notebook"
    s = text.index(phrase)
    view.set_selection(s, s + len(phrase))
    window.question_view.alternatives.linkActivated.emit("basis:3")
    mine = [x for x in window.backend.store.question(q.id, annotator="anna").spans if x.origin == HUMAN]
    assert (BASIS, 3, phrase) in [(x.role, x.alternative, text[x.start:x.end]) for x in mine]
    assert f"“{phrase}”" in window.question_view.alternatives.text()
    _close(window)
