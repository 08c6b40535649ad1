"""The navigator over store queries (pytest-qt, offscreen, real EMBRACE files): each annotator's
own status across a restart, the sources' own item numbers, FTS5 search combined with filters,
a filter registered by another module, and pages read as the list is walked."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from desktop import formats  # noqa: E402
from desktop.domain.changes import Change  # noqa: E402
from desktop.store import Store, item_filters  # noqa: E402
from desktop.ui.navigator import item_list as navigator_module  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "embrace"
GREEN, YELLOW = DATA / "embrace_green.jsonl", DATA / "embrace_yellow.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "nav.db"
    with Store.open(path, annotator="imported") as s:
        for f in (GREEN, YELLOW):
            s.import_datasets(formats.read(f), file=f)
    return path


def _open(qtbot, db: Path, annotator: str) -> MainWindow:
    window = MainWindow(Backend.open(str(db), annotator=annotator), facts=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def _close(window: MainWindow) -> None:
    window.close()
    window.backend.close()


def _ids(*paths: Path) -> list[str]:
    """Item ids grouped by passage in first-import order, as the navigator lists them."""
    order: dict[str, list[str]] = {}
    for path in paths:
        for rec in _lines(path):
            order.setdefault(str(rec["id"]), []).extend(str(q["id"]) for q in rec["test"])
    return [i for ids in order.values() for i in ids]


def test_status_per_annotator_survives_a_restart(qtbot, db):
    ids = _ids(GREEN, YELLOW)
    anna = _open(qtbot, db, "anna")
    assert anna.current == ids[0]
    anna.go_menu.done_and_next()  # ids[0] done for anna, on to the next unfinished
    assert anna.current == ids[1]
    anna.comments._radios["unsure"].click()  # an edit: ids[1] in progress for anna
    assert anna.navigator.progress.text().startswith(f"<b>1 of {len(ids)} done</b>")
    _close(anna)

    bob = _open(qtbot, db, "bob")
    nav = bob.navigator
    first = nav.model.row_of(ids[0])
    assert (first.status, first.n_done) == ("untouched", 1)  # anna's done is hers; bob sees it counted
    assert nav.model.index(nav.model.row_index(first.rowid), 2).data() == "1"
    assert bob.comments._status_buttons["untouched"].isChecked()
    bob.go_menu.done_and_next()  # bob finishes ids[0] too
    assert nav.model.row_of(ids[0]).n_done == 2
    bob.backend.store.apply(Change(ids[0], "status", "done", "gold"))  # the adjudicated layer
    bob.editing.refresh_rows([ids[0]])
    assert nav.model.row_of(ids[0]).gold_status == "done"
    assert nav.model.index(nav.model.row_index(first.rowid), 2).data() == "2★"  # gold not counted
    _close(bob)

    anna = _open(qtbot, db, "anna")  # the restart: every status is where its annotator left it
    nav = anna.navigator
    assert nav.progress.text().startswith(f"<b>1 of {len(ids)} done</b>")
    assert "1 in progress" in nav.progress.text() and "1 finished by someone" in nav.progress.text()
    assert [nav.model.row_of(i).status for i in ids[:3]] == ["done", "in progress", "untouched"]
    status = nav.filters["status"]
    status.setCurrentIndex(status.findText("done by another annotator"))
    assert nav.visible_items() == [ids[0]]
    status.setCurrentIndex(status.findText("adjudicated (gold done)"))
    assert nav.visible_items() == [ids[0]]
    status.setCurrentIndex(0)
    _close(anna)
    # the command line reads the same rows
    out = subprocess.run([sys.executable, "-m", "desktop.cli", "stats", "--db", str(db), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    by = json.loads(out.stdout)["status_by_annotator"]
    assert by == {"anna": {"done": 1, "in progress": 1}, "bob": {"done": 1}, "gold": {"done": 1}}


def test_labels_are_the_sources_own_numbers(qtbot, db):
    window = _open(qtbot, db, "anna")
    nav = window.navigator
    m = nav.model
    # passage 4 holds 4_0, 4_2, 4_4 (green) and 4_1, 4_3 (yellow), listed under one header
    want = [str(q["id"]) for path in (GREEN, YELLOW) for rec in _lines(path) if str(rec["id"]) == "4"
            for q in rec["test"]]
    assert want == ["4_0", "4_2", "4_4", "4_1", "4_3"]
    rows = [m.row_index(m.row_of(i).rowid) for i in want]
    assert rows == list(range(rows[0], rows[0] + 5))
    assert m.index(rows[0] - 1, 0).data() == "embrace · test · 4"  # the passage header (source, split, id)
    assert [m.index(r, 0).data().split()[0] for r in rows] == want
    assert navigator_module.item_label("high10024.txt-3", "high10024.txt") == "-3"
    _close(window)


def test_search_is_fts_and_combines_with_filters(qtbot, db):
    window = _open(qtbot, db, "anna")
    nav = window.navigator
    word = "volunteer"  # FTS5 finds words starting with it: volunteers, volunteered
    starts = re.compile(r"\b" + word)
    want = []
    for path in (GREEN, YELLOW):
        for rec in _lines(path):
            for q in rec["test"]:
                texts = [rec["text"], q["mcq"]["stem"], *q["mcq"]["choices"]]
                if any(word in t.lower() for t in texts):
                    want.append(str(q["id"]))
    order = _ids(GREEN, YELLOW)
    want = sorted(set(want), key=order.index)
    assert want
    nav.search.setText(word)
    nav.filter_bar._apply_search()
    assert nav.visible_items() == want
    assert f"{len(want)} shown" in nav.progress.text()
    # combined with a filter: my status "done" on one of the hits only
    window.go_to(want[-1])
    window.edit("status", "done")
    status = nav.filters["status"]
    status.setCurrentIndex(status.findText("done"))
    assert nav.visible_items() == [want[-1]]
    nav.search.clear()  # the filter alone
    assert nav.visible_items() == [want[-1]]
    _close(window)


def test_a_filter_registered_by_another_module(qtbot, db):
    """An "annotators disagree"-like filter whose test is Python: here, items with imported comments."""
    commented = [str(q["id"]) for path in (GREEN, YELLOW) for rec in _lines(path) for q in rec["test"]
                 if q["annotations"].get("comments")]
    order = _ids(GREEN, YELLOW)
    commented = sorted(set(commented), key=order.index)
    assert commented
    item_filters.register(item_filters.IdsFilter(
        "commented", choices=["has comments"], tooltip="Items somebody commented on",
        ids=lambda store, value: [i for i in order if store.question(i).comments]))
    try:
        window = _open(qtbot, db, "anna")
        combo = window.navigator.filters["commented"]  # registered before the window: a box of its own
        assert combo.accessibleName() and combo.accessibleDescription()
        combo.setCurrentIndex(combo.findText("has comments"))
        assert window.navigator.visible_items() == commented
        _close(window)
    finally:
        item_filters.FILTERS.pop("commented", None)


def test_pages_are_read_as_the_list_is_walked(qtbot, db, monkeypatch):
    monkeypatch.setattr(navigator_module, "PAGE", 25)
    ids = _ids(GREEN, YELLOW)
    window = _open(qtbot, db, "anna")
    nav = window.navigator
    # the pages that fill the view (and their passage headers), not the bank
    assert nav.model.n_loaded() < len(ids) // 3
    walked = [window.current]
    while nav.next_item() is not None:
        walked.append(window.current)
    assert walked == ids
    assert nav.model.n_loaded() == len(ids) + len({i.rsplit("_", 1)[0] for i in ids})
    while nav.previous_item() is not None:
        pass
    assert window.current == ids[0]
    # a far jump loads the rows up to it in one query
    window.navigator.reload()
    assert window.go_to(ids[-1]) and nav.current == ids[-1]
    assert nav.tree.currentIndex().data(navigator_module.ROW_ROLE).item_id == ids[-1]
    _close(window)


def test_the_shown_count_is_the_list_for_every_filter_value(qtbot, db):
    """"N shown" comes from a count that joins only what the filter names (Navigation.total);
    for every value of every built-in filter, on the imported EMBRACE items with their facts,
    it is the number of items the list then holds, and the full status counts agree."""
    from desktop.store.navigation import ItemQuery

    window = MainWindow(Backend.open(str(db), annotator="imported"), facts=True)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.navigator.nav.n_facts() > 0, timeout=60_000)
    window.facts_runner.wait(60)
    nav = window.navigator
    seen_nonzero = seen_zero = 0
    for name, combo in nav.filters.items():
        for i in range(1, combo.count()):
            combo.setCurrentIndex(i)
            shown = nav.visible_items()
            total = nav.nav.total(nav.filter_bar.query())
            assert total == len(shown) == nav.nav.counts(nav.filter_bar.query())["total"], (name, combo.itemText(i))
            assert f"{total} shown" in nav.progress.text()
            seen_nonzero += total > 0
            seen_zero += total == 0
        combo.setCurrentIndex(0)
    assert nav.visible_items() == _ids(GREEN, YELLOW)
    assert seen_nonzero and seen_zero  # both kinds of answer were checked
    _close(window)
