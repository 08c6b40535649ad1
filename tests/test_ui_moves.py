"""A move through the items redoes what changed and nothing else (pytest-qt, offscreen, EMBRACE green).

benchmarks/bench_gui.py times the moves; these check the behaviour that makes them cheap:
the passage is not laid out again when only the question changes, a tab behind another is
brought up to date when it is shown (and is then the current item's), and the side panel's
re-layout stays inside its page.
"""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop import formats  # noqa: E402
from desktop.store import Store  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402
from desktop.ui.item.suggestions import pending  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


def _window(qtbot, tmp_path, monkeypatch) -> MainWindow:
    monkeypatch.setenv("MCQLENS_MODEL", str(tmp_path / "no-model"))
    store = Store.open(str(tmp_path / "moves.db"), annotator="anna")
    store.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
    window = MainWindow(Backend(store), facts=False)
    window.owns_backend = True
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    return window


def _passage_with_questions(window: MainWindow, n: int = 3) -> list[str]:
    by_passage: dict[str, list[str]] = {}
    for row in window.backend.items():
        by_passage.setdefault(row.passage_id, []).append(row.item_id)
    return next(ids for ids in by_passage.values() if len(ids) >= n)


def test_a_move_within_a_passage_keeps_its_text_laid_out(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch)
    first, second, third = _passage_with_questions(window)[:3]
    window.go_to(first)
    text = window.state.passage_text
    changes = []
    window.passage.document().contentsChange.connect(lambda at, removed, added: changes.append((at, removed, added)))
    for item in (second, third, first):
        window.go_to(item)
        QApplication.processEvents()
        assert window.state.passage_text == text
    # only the spacing of paragraphs whose lanes differ was touched, never the whole text again
    assert all(removed < len(text) for _, removed, _ in changes), changes
    window.go_to(next(r.item_id for r in window.backend.items() if r.passage_id != window.state.question.passage_id))
    assert any(removed >= len(text) for _, removed, _ in changes)  # a new passage: laid out anew
    window.close()


def test_the_problems_tab_behind_another_is_filled_when_it_comes_to_the_front(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch)
    window.show_tab("difficulty")
    with_suggestions = [r.item_id for r in window.backend.items()
                        if (window.go_to(r.item_id) or True) and pending(window.state.question, window.state.passage_text)]
    assert len(with_suggestions) >= 2
    rows_before = list(window.problems.suggestion_rows)
    for item in with_suggestions[:2]:
        window.go_to(item)
    assert window.problems.suggestion_rows == rows_before and window.problems_later.waiting  # nothing built unseen
    window.show_tab("problems")
    QApplication.processEvents()
    assert not window.problems_later.waiting
    shown = [row.suggestion.tag for row in window.problems.suggestion_rows]
    assert shown == [s.tag for s in pending(window.state.question, window.state.passage_text)]  # the current item's
    # while it is in front, a move updates it at once
    window.go_to(with_suggestions[0])
    assert [r.suggestion.tag for r in window.problems.suggestion_rows] == \
        [s.tag for s in pending(window.state.question, window.state.passage_text)]
    window.close()


class _LayoutRequests(QObject):
    def __init__(self):
        super().__init__()
        self.seen = []

    def eventFilter(self, obj, event):
        if event.type() == QEvent.LayoutRequest:
            self.seen.append(obj)
        return False


def test_the_side_panel_re_lays_its_page_not_the_window(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path, monkeypatch)
    ids = [r.item_id for r in window.backend.items()][:12]
    window.go_to(ids[0])
    window.model_review.settle(30)  # the panel has said that there is no model: nothing else arrives later
    QApplication.processEvents()
    spy = _LayoutRequests()
    QApplication.instance().installEventFilter(spy)
    try:
        for item in ids[1:]:
            window.go_to(item)
            QApplication.processEvents()
    finally:
        QApplication.instance().removeEventFilter(spy)
    assert any(window.difficulty.isAncestorOf(w) or w is window.difficulty for w in spy.seen)  # the form changed
    # ... but its tab widget (which repaints all it holds when it is laid out) and the splitter of the
    # window's three columns were laid out again on few of the moves, not on each one as when every
    # page's change rose through them (a page scroll bar that comes or goes still does)
    moves = len(ids) - 1
    assert sum(w is window.tabs for w in spy.seen) <= moves // 4
    assert sum(w is window.work for w in spy.seen) <= moves // 4
    window.close()
