"""Time on item (issue 15): derived from the history's timestamps, on real EMBRACE items.

The store's clock (`desktop.store.imports.now`, the only source of history timestamps)
is set to chosen instants, so the expected seconds follow from the rule in
`desktop.domain.time_on_item` by hand: gaps between one annotator's consecutive edits of
an item, each counted up to 300 s.
"""
from __future__ import annotations

import csv
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from desktop.cli import main  # noqa: E402
from desktop.domain import time_on_item as TOI  # noqa: E402
from desktop.domain.changes import Change  # noqa: E402
from desktop.formats import read  # noqa: E402
from desktop.store import Store  # noqa: E402
from desktop.store import imports as store_clock  # noqa: E402

GREEN = Path(__file__).resolve().parents[2] / "shared" / "data" / "embrace" / "embrace_green.jsonl"
T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)


def _ids() -> list[str]:
    with open(GREEN, encoding="utf-8") as fh:
        first = json.loads(fh.readline())
    return [q["id"] for q in first["test"]]


def _edit(store, monkeypatch, at_s: float, change: Change) -> None:
    monkeypatch.setattr(store_clock, "now", lambda: (T0 + timedelta(seconds=at_s)).isoformat(
        timespec="microseconds"))
    store.apply(change)


@pytest.fixture()
def db(tmp_path, monkeypatch):
    """EMBRACE green, then anna edits the file's first item at 0, 10, 25.5 and 1025.5 s (a 1000 s pause),
    undoes the last edit at 1030.5 s, touches the second item once; ben edits the first item twice."""
    path = tmp_path / "a.db"
    first, second = _ids()[:2]
    with Store.open(path, annotator="anna") as store:
        store.import_datasets(read(GREEN), file=str(GREEN))
        for at, change in ((0, Change(first, "comment", "stem unclear")),
                           (10, Change(first, "difficulty.nphr", "1")),
                           (25.5, Change(first, "answerability", "answerable")),
                           (1025.5, Change(first, "status", "done"))):
            _edit(store, monkeypatch, at, change)
        monkeypatch.setattr(store_clock, "now", lambda: (T0 + timedelta(seconds=1030.5)).isoformat())
        store.undo()
        _edit(store, monkeypatch, 40, Change(second, "comment", "fine"))
        _edit(store, monkeypatch, 50, Change(first, "comment", "agree", annotator="ben"))
        _edit(store, monkeypatch, 62.25, Change(first, "answerability", "unsure", annotator="ben"))
    monkeypatch.undo()
    return path, first, second


ANNA_FIRST = 10 + 15.5 + 300 + 5  # the 1000 s pause counts 300 s; the undo 5 s later is an edit too
BEN_FIRST = 12.25


def test_the_store_sums_capped_gaps_per_annotator_and_item_and_a_restart_keeps_them(db):
    path, first, second = db
    assert TOI.seconds([0, 10, 25.5, 1025.5, 1030.5]) == ANNA_FIRST
    with Store.open(path, annotator="anna") as store:  # a new process's view: only what is stored
        rows = {(t.item_id, t.annotator): t for t in store.time_on_item()}
    assert set(rows) == {(first, "anna"), (first, "ben"), (second, "anna")}
    assert rows[(first, "anna")].seconds == pytest.approx(ANNA_FIRST, abs=0.002)
    assert rows[(first, "anna")].edits == 5
    assert rows[(first, "ben")].seconds == pytest.approx(BEN_FIRST, abs=0.002)
    assert rows[(second, "anna")].seconds == 0.0 and rows[(second, "anna")].edits == 1
    with Store.open(path) as store:
        only_ben = store.time_on_item(annotator="ben")
        shorter = store.time_on_item(annotator="anna", item_id=first, idle_limit=60)
    assert [(t.item_id, t.annotator) for t in only_ben] == [(first, "ben")]
    assert shorter[0].seconds == pytest.approx(10 + 15.5 + 60 + 5, abs=0.002)


def test_report_and_csv_export_carry_the_column(db, tmp_path):
    path, first, second = db
    assert main(["report", "--db", str(path), "-o", str(tmp_path / "r")]) == 0
    with open(tmp_path / "r" / "items.csv", encoding="utf-8") as fh:
        report = {r["item_id"]: r for r in csv.DictReader(fh)}
    assert float(report[first]["time_on_item_s"]) == pytest.approx(ANNA_FIRST + BEN_FIRST, abs=0.01)
    assert float(report[second]["time_on_item_s"]) == 0.0
    assert sum(float(r["time_on_item_s"]) for r in report.values()) == pytest.approx(
        ANNA_FIRST + BEN_FIRST, abs=0.01)

    assert main(["export", "csv", "--db", str(path), "-o", str(tmp_path / "all.csv")]) == 0
    assert main(["export", "csv", "--db", str(path), "-o", str(tmp_path / "ben.csv"), "--annotator", "ben"]) == 0
    for name, want in (("all.csv", ANNA_FIRST + BEN_FIRST), ("ben.csv", BEN_FIRST)):
        with open(tmp_path / name, encoding="utf-8") as fh:
            rows = {r["item_id"]: r for r in csv.DictReader(fh)}
        assert float(rows[first]["time_on_item_s"]) == pytest.approx(want, abs=0.01), name


def test_the_window_shows_my_time_with_an_accessible_name(db, qtbot):
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    path, first, _ = db
    window = MainWindow(Backend.open(str(path), annotator="ben"), facts=False)
    qtbot.addWidget(window)
    window.open_item(first)
    label = window.comments.time_on_item
    assert label.accessibleName() == "Time on item"
    assert label.text() == "Your time on this item: 12 s"
    window.close()
    window.backend.close()
