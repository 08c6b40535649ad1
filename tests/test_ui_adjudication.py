"""Annotators in the workbench (pytest-qt, offscreen): the layer selector and the adjudication dialog.

ExpMRC's RACE+ dev file gives two evidence references per question, imported as the
annotators expmrc-ref-1 and expmrc-ref-2; on some items they differ.  The expected
spans are read from the file in the test.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent  # noqa: E402
from PySide6.QtGui import QHelpEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from desktop.domain.model import EVIDENCE  # noqa: E402
from desktop.formats import expmrc  # noqa: E402
from desktop.store import Store  # noqa: E402
from desktop.ui.backend import Backend  # noqa: E402
from desktop.ui.menus.annotators import ALL, LayerDialog, span_tooltip  # noqa: E402
from desktop.ui.main_window import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXPMRC = ROOT.parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


def _evidence(q, annotator):
    return sorted((s.start, s.end) for s in q.spans if s.role == EVIDENCE and s.annotator == annotator)


@pytest.fixture(scope="module")
def disputed():
    """The first item of the file whose two references mark different evidence (ref-1 marking some
    words ref-2 does not), and its passage text."""
    ds = expmrc.read(EXPMRC)
    for p in ds.passages:
        for q in p.questions:
            one, two = _evidence(q, "expmrc-ref-1"), _evidence(q, "expmrc-ref-2")
            if one and two and any(not any(s <= i < e for s, e in two) for i in range(*one[0])):
                return q.id, one, two, p.text
    raise AssertionError("the references agree everywhere")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    db = tmp_path_factory.mktemp("adj") / "expmrc.db"
    with Store.open(db) as store:
        store.import_datasets([expmrc.read(EXPMRC)], file=EXPMRC)
    return db


@pytest.fixture
def window(qtbot, imported, tmp_path):
    db = tmp_path / "work.db"
    db.write_bytes(imported.read_bytes())
    w = MainWindow(Backend.open(str(db), annotator="anna"), facts=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    if w.layers.dialog is not None:
        w.layers.dialog.close()
    w.close()
    w.backend.close()


def _shown(window):
    return sorted((s.annotator, s.start, s.end) for s in window.passage.spans if s.role == EVIDENCE)


def test_layer_selector_shows_one_annotator_or_all(window, disputed):
    item, one, two, text = disputed
    assert window.go_to(item)
    everyone = sorted([("expmrc-ref-1", *s) for s in one] + [("expmrc-ref-2", *s) for s in two])
    assert _shown(window) == everyone  # as loaded: both imported references
    window.layers.set_layer("expmrc-ref-1")
    assert _shown(window) == [("expmrc-ref-1", *s) for s in one]
    assert f"expmrc-ref-1: {len(one)} evidence" in window.layers.legend.text()
    # another item keeps the chosen layer
    window.go_menu.next_item()
    assert window.current != item
    assert {s.annotator for s in window.passage.spans} == {"expmrc-ref-1"}
    assert window.go_to(item)
    window.layers.set_layer(ALL)
    assert _shown(window) == everyone
    tip = span_tooltip([s for s in window.passage.spans if s.start <= one[0][0] < s.end], text)
    assert "expmrc-ref-1" in tip and text[one[0][0]:one[0][0] + 20] in tip
    # hovering where only ref-1 marked evidence names ref-1 alone
    only_one = next(i for i in range(*one[0]) if not any(s <= i < e for s, e in two))
    vp = window.passage.viewport()
    at = window.passage.point_of(only_one).toPoint()
    QApplication.sendEvent(vp, QHelpEvent(QEvent.ToolTip, at, vp.mapToGlobal(at)))
    assert "expmrc-ref-1" in QToolTip.text() and "expmrc-ref-2" not in QToolTip.text()
    window.layers.set_layer(None)
    assert window.layers.legend.text() == ""


def test_layer_dialog_lists_who_did_what(qtbot, window, disputed):
    item, one, two, _ = disputed
    assert window.go_to(item)
    dialog = LayerDialog(window.layers, item, window)
    qtbot.addWidget(dialog)
    labels = [dialog.list.item(i).text() for i in range(dialog.list.count())]
    assert f"expmrc-ref-2 — {len(two)} evidence" in labels
    dialog.list.setCurrentRow(next(i for i, t in enumerate(labels) if t.startswith("expmrc-ref-1 ")))
    assert dialog.chosen() == "expmrc-ref-1"


def test_adjudication_dialog_adopts_and_edits_gold_with_history(qtbot, window, disputed):
    item, one, two, text = disputed
    assert window.go_to(item)
    window.layers.adjudicate_action.trigger()
    dialog = window.layers.dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.fields() == ["evidence"]
    assert dialog.columns == ["expmrc-ref-1", "expmrc-ref-2", "gold"]
    # side by side: each column shows that reference's words
    r = dialog.fields().index("evidence")
    assert text[two[0][0]:two[0][1]][:60] in dialog.table.item(r, 1).text()
    assert dialog.select("evidence", "expmrc-ref-2")
    assert text[two[0][0]:two[0][1]] in dialog.context.toPlainText()  # the version in its passage
    dialog.adopt_button.click()
    store = window.backend.store
    gold = _evidence(store.question(item), "gold")
    assert gold == two
    history = [(h.annotator, h.field, h.after["start"], h.after["end"]) for h in store.history(item)
               if h.annotator == "gold"]
    assert history == [("gold", "span.add", s, e) for s, e in two]
    assert dialog.value("evidence", "gold") == [list(s) for s in two]
    assert "#" in dialog.history.text()
    # the window shows gold among all layers after the dialog's edit
    window.layers.set_layer("gold")
    assert _shown(window) == [("gold", *s) for s in two]

    # an edited final version: from ref-1's start to ref-2's end
    final = [[min(one[0][0], two[0][0]), max(one[-1][1], two[-1][1])]]
    dialog.select("evidence", "gold")
    dialog.editor.setPlainText(json.dumps(final))
    dialog.save_button.click()
    assert _evidence(store.question(item), "gold") == [tuple(final[0])]
    fields = [h.field for h in store.history(item) if h.annotator == "gold"]
    assert fields == ["span.add"] * len(two) + ["span.remove"] * len(two) + ["span.add"]
    assert _shown(window) == [("gold", *final[0])]
    # a malformed version is refused in words and stores nothing
    n = len(store.history(item))
    dialog.editor.setPlainText("[[5, 2]]")
    dialog.save_button.click()
    assert "Not saved" in dialog.message.text() and len(store.history(item)) == n
