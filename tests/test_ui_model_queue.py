"""The model's queue in the real window (pytest-qt, offscreen) with the tiny test model on the
first passages of EMBRACE green (issue 29): two stages, the open item first, then the items
ahead in the navigator's order and filter; a jump re-targets at once; nothing is scored twice;
the rows are those `mcqlens score` stores (the CSV export byte for byte); pause and close stop
it without losing a stored row; Score all and Why? use the same model.

Expected item orders come from the navigator's own query (`visible_items`), expected rows from
`mcqlens score` and `mcqlens export predictions` run on a second database."""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, Qt  # noqa: E402

from desktop import cli, formats  # noqa: E402
from desktop.store import Store  # noqa: E402
from desktop.app import model_stages  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402
from desktop.app.model_stages import EVIDENCE, GIVEAWAY, PROBABILITIES  # noqa: E402
from desktop.ui.navigator.item_list import SCORED_MARK  # noqa: E402
from inference.giveaway_result import variant as giveaway_variant  # noqa: E402 - the default explanation variant

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"
TINY = ROOT / "tests" / "data" / "tiny_model"

needs_model = pytest.mark.skipif(not (TINY / "card.json").is_file(), reason="tiny test model not built")


def _green(passages: int = 4):
    datasets = formats.read(str(GREEN))
    for ds in datasets:
        ds.passages = ds.passages[:passages]
    return datasets


def _db(path: Path, passages: int = 4) -> Path:
    with Store.open(path) as store:
        store.import_datasets(_green(passages), file=str(GREEN))
    return path


def _window(qtbot, monkeypatch, db: Path, ahead: int = 3, settings=None) -> MainWindow:
    monkeypatch.setenv("MCQLENS_MODEL", str(TINY))
    monkeypatch.setenv("MCQLENS_SCORE_AHEAD", str(ahead))
    window = MainWindow(Backend(Store.open(str(db), annotator="anna")), settings=settings, facts=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    mr = window.model_review
    qtbot.waitUntil(lambda: mr.model is not None or mr.model_error is not None, timeout=120000)
    assert mr.model_error is None, mr.model_error
    return window


def _idle(mr) -> bool:
    snap = mr.worker.snapshot()
    return not snap["busy"] and snap["running"] is None and snap["open_left"] == []


def _wait_idle(qtbot, mr, timeout=120000):
    qtbot.waitUntil(lambda: _idle(mr), timeout=timeout)


def _close(window):
    window.close()
    window.model_review.stop(30)
    window.backend.close()


def _next_ids(window, n):
    ids = window.navigator.visible_items()
    i = ids.index(window.current)
    return ids[i + 1:i + 1 + n]


def _probability_order(mr):
    return [item for item, stage in mr.worker.queue.computed if stage == PROBABILITIES]


# ---- in the window -----------------------------------------------------------------------------------

@needs_model
def test_open_item_first_then_the_next_items_in_the_navigators_order(qtbot, monkeypatch, tmp_path):
    window = _window(qtbot, monkeypatch, _db(tmp_path / "a.db"), ahead=3)
    mr = window.model_review
    first = window.current
    _wait_idle(qtbot, mr)
    expected = [first] + _next_ids(window, 3)
    assert _probability_order(mr) == expected
    assert mr.worker.queue.computed[:2] == [(first, PROBABILITIES), (first, EVIDENCE)]  # the open item: both stages first
    # every item ahead has both stages and its give-away words stored, as `mcqlens score` and `explain` store them
    store = window.backend.store
    for item in expected[1:]:
        preds = {p.input_format: p for p in store.predictions(item, mr.model.id)}
        assert set(preds) == {"standard", "shortcut"}
        assert preds["standard"].evidence and not preds["standard"].extra.get("evidence_pending")
        assert store.explanation(item, mr.model.id, giveaway_variant()) is not None
    assert mr.queue_control.model_state.text() == "model: 3 items ahead"
    # the navigator marks the items whose numbers are stored
    model = window.navigator.model
    marked = {model.item_at(i).item_id for i in range(model.n_loaded()) if model.item_at(i) is not None
              and str(model.data(model.index(i, 0))).startswith(f" {SCORED_MARK} ")}
    assert marked == set(expected)
    # Ctrl+Enter: the next item's numbers are on screen at once, and the plan moves one on
    window.go_menu.done_and_next()
    assert window.current == expected[1]
    assert mr.view is not None and set(mr.view.formats) == {"standard", "shortcut"} and mr.view.evidence
    _wait_idle(qtbot, mr)
    assert _probability_order(mr) == expected + _next_ids(window, 3)[-1:]
    _close(window)


@needs_model
def test_a_filter_or_the_order_re_plans_and_a_jump_re_targets_at_once(qtbot, monkeypatch, tmp_path):
    db = _db(tmp_path / "a.db", passages=8)
    gate = threading.Event()
    seen_cancel: list[str] = []
    real = model_stages.score_probabilities

    opened = {}  # the window, once made (the model's thread starts inside its constructor)

    def slow(model, question, passage_text, cancel=None, rescore=False):
        # an ahead item takes until the gate opens (or it is cancelled): a slow model
        if question.id != (opened["w"].current if opened else "0_0"):
            while not gate.is_set():
                if cancel is not None and cancel():
                    seen_cancel.append(question.id)
                    return None
                time.sleep(0.01)
        return real(model, question, passage_text, cancel, rescore)

    monkeypatch.setattr(model_stages, "score_probabilities", slow)
    window = opened["w"] = _window(qtbot, monkeypatch, db, ahead=2)
    mr = window.model_review
    nav = window.navigator
    qtbot.waitUntil(lambda: mr.worker.snapshot()["running"] is not None
                    and mr.worker.snapshot()["running"][0] != window.current, timeout=60000)
    busy_with = mr.worker.snapshot()["running"][0]
    assert busy_with == _next_ids(window, 1)[0]
    # a jump far away: the item in the model's hands is dropped at once, the new one comes first
    ids = nav.visible_items()
    far = ids[-1]
    t0 = time.monotonic()
    assert window.go_to(far)
    qtbot.waitUntil(lambda: busy_with in seen_cancel, timeout=5000)
    assert time.monotonic() - t0 < 2.0
    qtbot.waitUntil(lambda: (far, PROBABILITIES) in mr.worker.queue.computed, timeout=60000)
    assert (busy_with, PROBABILITIES) not in mr.worker.queue.computed
    # a filter: the plan is the next items the navigator shows
    window.go_to(ids[0])
    status = nav.filters["status"]
    status.setCurrentIndex(status.findText("not done"))
    qtbot.waitUntil(lambda: mr.worker.queue.ahead == _next_ids(window, 2), timeout=2000)
    window.edit("status", "done")  # marked done: under "not done" it stays listed until the filter changes
    nav.search.setText("parent")  # a search: only the items that contain it
    nav.filter_bar._apply_search()
    shown = nav.visible_items()
    after = [i for i in shown if i != window.current]
    want = _next_ids(window, 2) if window.current in shown else after[:2]
    qtbot.waitUntil(lambda: mr.worker.queue.ahead == want, timeout=2000)
    nav.search.clear()
    nav.filter_bar._apply_search()
    status.setCurrentIndex(0)
    # the order: by the shortcut model's N (the items scored so far first)
    window.start_facts()
    qtbot.waitUntil(lambda: nav.n_facts() > 0, timeout=30000)
    mr.order.setCurrentIndex(1)
    assert nav.order == "shortcut_n"
    qtbot.waitUntil(lambda: mr.worker.queue.ahead == _next_ids(window, 2), timeout=2000)
    gate.set()
    _wait_idle(qtbot, mr)
    done = mr.worker.queue.computed
    assert len(done) == len(set(done))  # nothing scored twice however often the plan changed
    _close(window)


@needs_model
def test_the_rows_are_those_mcqlens_score_stores_byte_for_byte(qtbot, monkeypatch, tmp_path):
    gui_db, cli_db = _db(tmp_path / "gui.db"), _db(tmp_path / "cli.db")
    with Store.open(gui_db) as store:
        n = len(store.items())
    window = _window(qtbot, monkeypatch, gui_db, ahead=n)
    mr = window.model_review
    _wait_idle(qtbot, mr)
    assert sorted(_probability_order(mr)) == sorted(r.item_id for r in window.backend.items())
    _close(window)
    assert cli.main(["score", "--db", str(cli_db), "--model", str(TINY), "--device", "cpu", "--no-progress"]) == 0
    out = {}
    for name, db in (("gui", gui_db), ("cli", cli_db)):
        out[name] = tmp_path / f"{name}.csv"
        assert cli.main(["export", "predictions", "--db", str(db), "-o", str(out[name])]) == 0
    assert out["gui"].read_bytes() == out["cli"].read_bytes()
    assert out["gui"].read_text(encoding="utf-8").count("\n") == 2 * n + 1
    # the stored rows themselves, their extra included (only the time they were stored differs)
    rows = {}
    for name, db in (("gui", gui_db), ("cli", cli_db)):
        with sqlite3.connect(db) as c:
            rows[name] = c.execute("SELECT question_id, model_id, input_format, probabilities, evidence, extra "
                                   "FROM predictions ORDER BY id").fetchall()
    assert rows["gui"] == rows["cli"]
    # the give-away words are those `mcqlens explain` stores
    assert cli.main(["explain", "--db", str(cli_db), "--model", str(TINY), "--device", "cpu", "--no-progress",
                     "-o", str(tmp_path / "why.csv")]) == 0
    words = {}
    for name, db in (("gui", gui_db), ("cli", cli_db)):
        with Store.open(db) as store:
            words[name] = {e["item_id"]: {k: v for k, v in e.items() if k != "seconds"} for e in store.model_outputs.explanations()}
    first = next(iter(sorted(words["cli"])))
    # the open item's words are computed only when its Why? tab is shown
    assert set(words["gui"]) == set(words["cli"]) - {first}
    assert all(words["gui"][i] == words["cli"][i] for i in words["gui"])


@needs_model
def test_nothing_is_scored_twice_across_moves_and_windows(qtbot, monkeypatch, tmp_path):
    db = _db(tmp_path / "a.db")
    window = _window(qtbot, monkeypatch, db, ahead=2)
    mr = window.model_review
    _wait_idle(qtbot, mr)
    for step in (window.navigator.next_item, window.navigator.next_item, window.navigator.previous_item,
                 window.navigator.previous_item, window.navigator.next_item):
        step()
        _wait_idle(qtbot, mr)
    done = mr.worker.queue.computed
    assert len(done) == len(set(done)) and len(done) >= 8
    scored = set(_probability_order(mr))
    _close(window)
    # a new window on the same database reuses every stored row and word
    window = _window(qtbot, monkeypatch, db, ahead=2)
    mr = window.model_review
    _wait_idle(qtbot, mr)
    assert [i for i in _probability_order(mr) if i in scored] == []
    _close(window)


@needs_model
def test_pause_stops_the_queue_and_is_remembered(qtbot, monkeypatch, tmp_path):
    db = _db(tmp_path / "a.db", passages=8)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat)
    window = _window(qtbot, monkeypatch, db, ahead=6, settings=settings)
    mr = window.model_review
    qtbot.waitUntil(lambda: len(mr.worker.queue.computed) >= 3, timeout=60000)
    before = mr.worker.snapshot()  # what a snapshot queued by the model's thread just before the pause says
    mr.queue_control.pause_action.trigger()  # Model → Pause the model
    mr.worker.queueChanged.emit(before)  # ...delivered after the pause's own (one CI run showed "1 item ahead")
    assert mr.queue_control.model_state.text() == "model: paused"
    assert mr.queue_control.paused and QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat).value("model_paused") in (True, "true")
    qtbot.waitUntil(lambda: mr.worker.snapshot()["running"] is None, timeout=30000)
    stopped_at = list(mr.worker.queue.computed)
    with Store.open(db) as store:
        stored = {(r.item_id, p.input_format): p.probabilities for r in store.items() for p in store.predictions(r.item_id)}
    assert stored  # what was scored before the pause is stored
    qtbot.wait(1500)
    assert mr.worker.queue.computed == stopped_at and mr.queue_control.model_state.text() == "model: paused"
    window.navigator.next_item()  # moving on scores nothing while paused
    assert window.model_menu.score_all()  # Score all waits too, and its Cancel ends it
    qtbot.wait(500)
    assert mr.worker.queue.computed == stopped_at and window.model_menu.last_score_run is None
    window.model_menu.score_progress.canceled.emit()  # its Cancel button
    qtbot.waitUntil(lambda: window.model_menu.last_score_run is not None, timeout=10000)
    assert window.model_menu.last_score_run.cancelled and window.model_menu.last_score_run.scored == 0
    _close(window)
    # the next session starts paused; nothing stored was lost
    window = _window(qtbot, monkeypatch, db, ahead=6, settings=settings)
    mr = window.model_review
    assert mr.queue_control.paused and mr.queue_control.pause_action.isChecked()
    with Store.open(db) as store:
        for (item, fmt), probs in stored.items():
            assert [p.probabilities for p in store.predictions(item) if p.input_format == fmt] == [probs]
    mr.queue_control.pause_action.trigger()  # on again: it goes on from there
    _wait_idle(qtbot, mr)
    assert mr.worker.queue.computed
    _close(window)


@needs_model
def test_closing_the_window_stops_the_queue_without_losing_a_stored_row(qtbot, monkeypatch, tmp_path):
    db = _db(tmp_path / "a.db", passages=12)
    window = _window(qtbot, monkeypatch, db, ahead=40)
    mr = window.model_review
    arrived = []
    mr.worker.stageReady.connect(lambda item, stage, _p: arrived.append((item, stage)), Qt.DirectConnection)
    qtbot.waitUntil(lambda: len(arrived) >= 6, timeout=60000)
    window.close()
    mr.stop(30)
    assert not mr.worker._thread.is_alive()
    window.backend.close()
    with Store.open(db) as store:
        for item, stage in arrived:
            preds = {p.input_format: p for p in store.predictions(item)}
            if stage in (PROBABILITIES, EVIDENCE):
                assert set(preds) == {"standard", "shortcut"}, item
            if stage == EVIDENCE:
                assert preds["standard"].evidence, item
            if stage == GIVEAWAY:
                assert store.explanation(item, "tiny-bert-2x32", giveaway_variant()) is not None
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@needs_model
def test_score_all_and_why_share_the_panels_one_model(qtbot, monkeypatch, tmp_path):
    from desktop.app import model_scoring

    loads = []
    real = model_scoring.load
    monkeypatch.setattr(model_scoring, "load", lambda d, cancel=None: loads.append(d) or real(d, cancel))
    db = _db(tmp_path / "a.db")
    window = _window(qtbot, monkeypatch, db, ahead=2)
    mr = window.model_review
    mr.why.open()  # Why? on the open item: computed by the same thread, right after its probabilities
    qtbot.waitUntil(lambda: mr.why.view.explanation is not None, timeout=60000)
    assert window.model_menu.score_all()
    qtbot.waitUntil(lambda: window.model_menu.last_score_run is not None or bool(window.last_error), timeout=120000)
    assert not window.last_error and not window.model_menu.last_score_run.cancelled
    assert len(loads) == 1  # one model in the window
    with Store.open(db) as store:
        n = len(store.items())
        assert store.stats()["annotations"]["predictions"] == 2 * n
        pending = [r.item_id for r in store.items()
                   if any(p.extra.get("evidence_pending") for p in store.predictions(r.item_id))]
    assert pending == []
    _close(window)


@needs_model
def test_two_stages_probabilities_first_then_the_evidence(qtbot, monkeypatch, tmp_path):
    gate = threading.Event()
    real = model_stages.score_evidence

    def held(*a, **kw):
        gate.wait(30)
        return real(*a, **kw)

    monkeypatch.setattr(model_stages, "score_evidence", held)
    window = _window(qtbot, monkeypatch, _db(tmp_path / "a.db"), ahead=0)
    mr = window.model_review
    item = window.current
    qtbot.waitUntil(lambda: mr.view is not None and set(mr.view.formats) == {"standard", "shortcut"}, timeout=60000)
    # the probabilities, N and MI are on screen (and stored); the evidence is still to come
    assert mr.view.evidence is None and mr.view.evidence_pending and mr.view.mi_bits is not None
    assert "evidence…" in mr.panel.status.text() and "evidence…" in mr.panel.evidence.text.text()
    assert not any(s.origin == "model" for s in window.passage.spans)
    std = next(p for p in window.backend.store.predictions(item) if p.input_format == "standard")
    assert std.extra.get("evidence_pending") and not std.evidence
    gate.set()
    qtbot.waitUntil(lambda: mr.view.evidence is not None, timeout=60000)
    assert not mr.view.evidence_pending and not mr.panel.status.isVisible()
    assert any(s.origin == "model" and (s.start, s.end) == mr.view.evidence[:2] for s in window.passage.spans)
    _close(window)


@needs_model
def test_what_if_re_scores_the_shortcut_format_only(qtbot, monkeypatch, tmp_path):
    import inference

    calls = []
    real = inference.score

    def recording(model, questions, passages=None, formats=None, **kw):
        calls.append((list(formats or []), kw.get("evidence", "default")))
        return real(model, questions, passages, formats, **kw)

    window = _window(qtbot, monkeypatch, _db(tmp_path / "a.db"), ahead=0)
    mr = window.model_review
    _wait_idle(qtbot, mr)
    monkeypatch.setattr(inference, "score", recording)
    q = window.state.question
    mr.panel.tabs.setCurrentWidget(mr.panel.whatif)
    mr._whatif_changed([a + " indeed" for a in q.alternatives], -1)
    qtbot.waitUntil(lambda: bool(calls), timeout=30000)
    assert calls == [(["shortcut"], None)]
    _close(window)
