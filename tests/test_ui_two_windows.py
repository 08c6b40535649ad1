"""Two windows (and `mcqlens annotate`) on one database: no silent lost update.

Each window has its own Store connection, as two `mcqlens gui` processes would.
An edit made on what a window showed before another window changed the field is
refused, the window reloads and names who changed it; the later edit after the
refresh wins and the earlier stays in history.  A timer brings in edits made by
other programs; a locked database gives a message in the window, not a traceback.
"""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from desktop import formats  # noqa: E402
from desktop.domain.model import EVIDENCE  # noqa: E402
from desktop.store import Store, connection  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


@pytest.fixture(scope="module")
def records():
    with open(GREEN, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def green():
    return formats.read(str(GREEN))


@pytest.fixture
def db(tmp_path, green) -> Path:
    path = tmp_path / "two.db"
    with Store.open(path, annotator="imported") as s:
        s.import_datasets(green, file=str(GREEN))
    return path


def _window(qtbot, db: Path, annotator: str = "anna", poll: bool = True) -> MainWindow:
    window = MainWindow(Backend(Store.open(db, annotator=annotator)), settings=None, facts=False)
    qtbot.addWidget(window)
    if not poll:  # a window that has not looked yet: it still shows what it read
        window.watcher.timer.stop()
    window.show()
    qtbot.waitExposed(window)
    return window


def _type_comment(window: MainWindow, text: str) -> None:
    window.comments.comment.setPlainText(text)
    window.comments.flush()


def _stored(db: Path, item: str, annotator: str = "anna"):
    with Store.open(db, annotator=annotator) as s:
        return s.question(item, annotator=annotator), s.history(item_id=item)


def test_stale_comment_is_refused_then_the_later_edit_wins(qtbot, db, records):
    first = records[0]["test"][0]["id"]
    one, two = _window(qtbot, db, poll=False), _window(qtbot, db, poll=False)
    assert one.current == two.current == first
    assert two.comments.list.count() == 0

    _type_comment(one, "The stem gives the answer away.")
    assert one.editing.last_saved is not None

    # window two still shows no comment of anna's and adds one: refused, nothing overwritten
    _type_comment(two, "Distractor C is too weak.")
    q, history = _stored(db, first)
    assert q.comments[-1:] == ["The stem gives the answer away."]
    assert "Distractor C" not in " ".join(q.comments)
    banner = two.banner.text
    assert two.banner.isVisible()
    assert "changed by anna at " in banner and "The stem gives the answer away." in banner
    # ... and window two now shows window one's comment
    assert [two.comments.list.item(i).text() for i in range(two.comments.list.count())] == [
        "1. The stem gives the answer away."]

    # the annotator, having seen it, applies theirs: the later edit wins, the earlier stays in history
    two.banner.action.click()
    assert not two.banner.isVisible()
    q, history = _stored(db, first)
    own = [h for h in history if h.field == "comments" and h.annotator == "anna"]
    assert [h.after for h in own] == [["The stem gives the answer away."], ["Distractor C is too weak."]]
    assert own[1].before == own[0].after  # the later was made on the earlier, not on the stale []
    assert q.comments[-1] == "Distractor C is too weak."


def test_stale_answerability_and_status_after_refresh(qtbot, db, records):
    first = records[0]["test"][0]["id"]
    one, two = _window(qtbot, db, poll=False), _window(qtbot, db, poll=False)
    assert one.edit("status", "done") is not None
    assert two.edit("status", "in progress") is None  # window two still shows the status it read: refused
    assert "status of " in two.banner.text and "“done”" in two.banner.text
    assert two.comments._status_buttons["done"].isChecked()  # refreshed: window one's status
    assert two.navigator.model.row_of(first).status == "done"

    one.comments._radios["unanswerable"].click()
    two.comments._radios["answerable"].click()  # on the label window two still shows: refused
    assert "answerability" in two.banner.text and "“unanswerable”" in two.banner.text
    assert two.comments._radios["unanswerable"].isChecked()

    # after the refresh window two's edits are made on what is stored: both go in
    two.comments._radios["answerable"].click()
    assert two.edit("status", "in progress") is not None
    q, history = _stored(db, first)
    assert q.answerability == "answerable"
    labels = [(h.before, h.after) for h in history if h.field == "answerability"]
    assert labels == [(None, "unanswerable"), ("unanswerable", "answerable")]
    assert [(h.annotator, h.after) for h in history if h.field == "status"] == [("anna", "done"),
                                                                                 ("anna", "in progress")]


def test_removing_a_span_another_window_removed_says_so(qtbot, db, records):
    first = records[0]["test"][0]
    one, two = _window(qtbot, db, poll=False), _window(qtbot, db, poll=False)
    text = records[0]["text"]
    start = text.index("good parent")
    hid = one.edit("span.add", {"role": EVIDENCE, "start": start, "end": start + len("good parent")})
    assert hid is not None
    sid = next(s.id for s in one.state.question.spans if s.start == start and s.annotator == "anna")
    two.watcher.tick()  # window two looks once and now shows the span
    assert any(s.id == sid for s in two.state.question.spans)
    assert one.edit("span.remove", {"id": sid}) is not None
    assert two.edit("span.remove", {"id": sid}) is None
    assert two.banner.isVisible()
    assert "already removed by anna at " in two.banner.text
    assert two.last_error == ""  # a warning in the window, no error box
    assert not any(s.id == sid for s in two.state.question.spans)
    assert first["id"] == two.current


def test_annotate_process_edit_appears_in_an_open_window(qtbot, db, records):
    ids = [q["id"] for r in records for q in r["test"]]
    window = _window(qtbot, db)
    window.watcher.timer.setInterval(300)
    assert window.go_to(ids[2])
    tree = window.navigator.tree
    tree.verticalScrollBar().setValue(tree.verticalScrollBar().maximum() // 2)
    scroll = tree.verticalScrollBar().value()
    lines = [{"item": ids[2], "field": "comment", "value": "from the batch script", "annotator": "anna"},
             {"item": ids[2], "field": "status", "value": "done", "annotator": "bob"},
             {"item": ids[5], "field": "status", "value": "done", "annotator": "bob"}]
    p = subprocess.run([sys.executable, "-m", "desktop.cli", "annotate", "--db", str(db)], cwd=ROOT,
                       input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("ok ") == 3
    # status is each annotator's own: bob's "done" shows as one annotator finished, anna's
    # comment made the item "in progress" for her
    qtbot.waitUntil(lambda: window.navigator.model.row_of(ids[5]).n_done == 1, timeout=5000)
    qtbot.waitUntil(lambda: window.comments.list.count() == 1, timeout=5000)
    assert window.comments.list.item(0).text() == "1. from the batch script"
    assert window.comments._status_buttons["in progress"].isChecked()
    row = window.navigator.model.row_of(ids[2])
    assert (row.status, row.n_done) == ("in progress", 1)
    assert window.current == ids[2] and window.navigator.current == ids[2]  # the selection stayed
    assert tree.verticalScrollBar().value() == scroll
    assert f"{ids[2]} was changed by anna, bob in another window or program" in window.last_message


def test_locked_database_gives_a_message_in_the_window(qtbot, db, records, monkeypatch):
    first = records[0]["test"][0]["id"]
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.3)  # the wait before giving up (5 s in use)
    window = _window(qtbot, db)
    other = sqlite3.connect(db, isolation_level=None)  # another program in the middle of a write
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE questions SET status = status WHERE id = ?", (first,))
    try:
        window.comments._radios["unsure"].click()
        window.watcher.tick()  # the timer keeps reading (WAL) while another program writes
        assert window.banner.isVisible()
        assert "database is locked by another program" in window.banner.text
        assert "locked" in window.last_error
        assert not window.comments._radios["unsure"].isChecked()  # shows what is stored
    finally:
        other.execute("ROLLBACK")
        other.close()
    window.banner.action.click()  # "Try again", now that the other program let go
    assert not window.banner.isVisible()
    q, _ = _stored(db, first)
    assert q.answerability == "unsure"


def test_the_timer_never_replaces_text_being_typed(qtbot, db, records):
    first = records[0]["test"][0]["id"]
    window, other = _window(qtbot, db), _window(qtbot, db, poll=False)
    window.comments.comment.setPlainText("half a thought")  # typing, not yet saved
    _type_comment(other, "saved in the other window")
    window.watcher.tick()
    assert window.comments.comment.toPlainText() == "half a thought"
    assert window.comments.list.count() == 0  # not redrawn under the annotator's hands
    window.comments.flush()  # the pause: saved on what the window showed -> refused, nothing lost
    assert "saved in the other window" in window.banner.text and "half a thought" in window.banner.text
    assert window.comments.list.item(0).text() == "1. saved in the other window"
    window.banner.action.click()
    q, _ = _stored(db, first)
    assert q.comments[-1] == "half a thought"


def test_a_batch_of_edits_elsewhere_updates_the_navigator_in_place(qtbot, db, records):
    from desktop.domain.changes import Change
    ids = [q["id"] for r in records for q in r["test"]]
    window = _window(qtbot, db, poll=False)
    assert window.go_to(ids[40])
    with Store.open(db, annotator="bob") as s, s.batch():  # more items than one passage's query
        for item in ids[:30]:
            s.apply(Change(item, "status", "done", "bob"))
    window.watcher.tick()
    # bob's progress, not anna's: her window counts them as finished by someone
    assert [window.navigator.model.row_of(i).n_done for i in ids[:31]] == [1] * 30 + [0]
    assert {window.navigator.model.row_of(i).status for i in ids[:31]} == {"untouched"}
    assert window.navigator.progress.text().startswith(f"<b>0 of {len(ids)} done</b>")
    assert "30 finished by someone" in window.navigator.progress.text()
    # the rows on screen show it: the "Done" column of the first item reads 1
    model = window.navigator.model
    first = model.row_index(model.row_of(ids[0]).rowid)
    assert model.index(first, 2).data() == "1"
    assert window.current == ids[40] and window.last_message == ""  # the open item was not touched
