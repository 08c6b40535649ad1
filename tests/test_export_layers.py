"""What the window shows is what every export writes (issue 24 §2).

EMBRACE green imported; annotator `tester` corrects NI on item 0_0 through
`mcqlens annotate` (as in the issue), marks another basis for B, adds a problem tag and a
comment.  Before the fix the EMBRACE export's `difficulty` kept only `items`: the eight
other imported values were gone, the CSV's difficulty.* columns empty, while the window
showed the total computed from them.  Every format is checked against the source file
and against the window's own widgets (the difficulty form's total).
"""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from desktop import formats  # noqa: E402
from desktop.cli import main  # noqa: E402
from desktop.domain import difficulty as km  # noqa: E402
from desktop.formats import embrace  # noqa: E402
from desktop.store import Store  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
EXPMRC = DATA / "expmrc" / "expmrc-race-dev.json"

NI_EDIT = {"item": "0_0", "field": "difficulty.ni", "value": "2"}  # the line, verbatim
TAG = {"type": "spelling_errors", "element": "question", "note": "tester's tag"}
COMMENT = "tester: NI is two items"


def _source():
    lines = GREEN.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _annotate(db: Path, lines: list[dict], who: str, monkeypatch, capsys) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(x) + "\n" for x in lines)))
    assert main(["annotate", "--db", str(db), "--annotator", who]) == 0
    out = capsys.readouterr().out.split()
    assert out.count("ok") == len(lines), out


@pytest.fixture
def edited(tmp_path, monkeypatch, capsys) -> dict:
    """The issue's steps: import green, `tester` changes NI on 0_0 (plus a basis, a tag, a comment)."""
    db = tmp_path / "annotations.db"
    assert main(["import", str(GREEN), "--db", str(db)]) == 0
    src = _source()[0]
    text, q0 = src["text"], src["test"][0]
    imported_b = q0["annotations"]["bases"]["b"]
    # tester's basis of B: the sentence before the imported one
    sentence = "Others are most successful before their children enter elementary school. "
    start = text.index(sentence)
    assert (start, start + len(sentence)) != (imported_b["start"], imported_b["end"])
    _annotate(db, [NI_EDIT,
                   {"item": "0_0", "field": "span.add",
                    "value": {"role": "basis", "alternative": 1, "start": start, "end": start + len(sentence)}},
                   {"item": "0_0", "field": "problem.add", "value": TAG},
                   {"item": "0_0", "field": "comment", "value": COMMENT}], "tester", monkeypatch, capsys)
    capsys.readouterr()
    return {"db": db, "src": src, "basis_b": (start, start + len(sentence), sentence)}


def _first(path: Path):
    """The first question of a file, as the product's reader gives it."""
    return next(formats.iter_questions(formats.read(path)))


def _imported_values() -> dict:
    """0_0's difficulty as the EMBRACE reader parses the source file (no store involved)."""
    q = _first(GREEN)
    assert q.id == "0_0" and len(q.assessments) == 1
    return dict(q.assessments[0].values)


def _window_total(qtbot, db: Path, annotator: str) -> str:
    """The total the window's difficulty form shows for 0_0, as the annotator sees it."""
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    window = MainWindow(Backend.open(str(db), annotator=annotator), facts=False)
    qtbot.addWidget(window)
    try:
        assert window.go_to("0_0")
        return window.difficulty.total.text()
    finally:
        window.close()
        window.backend.close()


def _expected_total() -> float:
    values = _imported_values()
    assert values["ni"] == "1"  # the file says one item; tester says two
    return km.total({**values, "ni": "2"})


# ---------------------------------------------------------------------------- EMBRACE


@pytest.mark.parametrize("layer", [[], ["--annotator", "tester"], ["--everyone"]],
                         ids=["default", "annotator-tester", "everyone"])
def test_embrace_export_keeps_the_imported_values_under_the_edit(edited, tmp_path, qtbot, layer):
    out = tmp_path / "out.jsonl"
    assert main(["export", "embrace", "--db", str(edited["db"]), "-o", str(out), *layer]) == 0
    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    src = _source()
    assert got[1:] == src[1:]  # nobody touched the other passages: written back as they came
    assert got[0]["test"][1:] == src[0]["test"][1:]
    before, after = src[0]["test"][0]["annotations"], got[0]["test"][0]["annotations"]
    raw_before, raw_after = before["difficulty"], after["difficulty"]
    # NI (EMBRACE's "items") is tester's; every other key of the record is the file's
    assert raw_after["items"] == "2" and raw_before["items"] == "1"
    assert {k: v for k, v in raw_after.items() if k not in ("items", "b_base_s", "b_base_e")} == \
        {k: v for k, v in raw_before.items() if k not in ("items", "b_base_s", "b_base_e")}
    for key in ("tom", "toi", "pod", "phr", "req_p", "infer_c", "multip"):  # the eight others, `items` aside
        assert raw_after[key] == raw_before[key], key
    # the basis of B lies on top of the imported one; A, C and D are the file's
    start, end, sentence = edited["basis_b"]
    assert after["bases"]["b"]["text"] == sentence and (after["bases"]["b"]["start"], raw_after["b_base_s"]) == \
        (start, start)
    for letter_ in "acd":
        assert after["bases"][letter_] == before["bases"][letter_]
    assert after["comments"] == before["comments"] + [COMMENT]
    # read back: the scale's values and total are what tester's window shows
    q = _first(out)
    values = q.assessments[0].values
    assert values == {**_imported_values(), "ni": "2"}
    assert any(t.type == TAG["type"] and t.element == TAG["element"] for t in q.problems)
    assert km.total(values) == _expected_total()
    assert f"Total difficulty: {_expected_total():g}" in _window_total(qtbot, edited["db"], "tester")


def test_the_imported_layer_alone_is_still_the_file(edited, tmp_path):
    out = tmp_path / "imported.jsonl"
    assert main(["export", "embrace", "--db", str(edited["db"]), "-o", str(out), "--annotator", "imported"]) == 0
    got = json.loads(out.read_text(encoding="utf-8").splitlines()[0])["test"][0]["annotations"]["difficulty"]
    assert got == _source()[0]["test"][0]["annotations"]["difficulty"]


# ---------------------------------------------------------------------------- CSV


def test_csv_carries_every_resolved_value_and_the_windows_total(edited, tmp_path, qtbot):
    import pandas as pd

    out = tmp_path / "items.csv"
    assert main(["export", "csv", "--db", str(edited["db"]), "-o", str(out)]) == 0
    frame = pd.read_csv(out, keep_default_na=False, dtype=str).set_index("item_id")
    row = frame.loc["0_0"]
    expected = {**_imported_values(), "ni": "2"}
    for var in km.VARIABLES:
        value = expected.get(var)
        if value is None:
            continue
        shown = "/".join(map(str, value)) if isinstance(value, list) else str(value)
        assert row[f"difficulty.{var}"] == shown, var
    assert float(row["difficulty_total"]) == _expected_total()
    assert f"Total difficulty: {float(row['difficulty_total']):g}" in _window_total(qtbot, edited["db"], "tester")
    assert row["assessment_annotator"] == "imported;tester"
    assert row["basis_B"] == edited["basis_b"][2]
    src = _source()[0]["test"][0]["annotations"]
    assert row["basis_A"] == src["bases"]["a"]["text"]
    assert COMMENT in row["comments"]
    assert f"{TAG['type']}@{TAG['element']}" in row["problems"].split(";")
    # an item nobody edited: the file's values and total
    other = formats.read(GREEN)[0].passages[0].questions[1]
    values = other.assessments[0].values
    assert float(frame.loc[other.id, "difficulty_total"]) == km.total(values)


# ---------------------------------------------------------------------------- RACE, ExpMRC


def test_race_export_writes_the_items_and_no_annotator_layer(edited, tmp_path):
    out = tmp_path / "race.json"
    assert main(["export", "race", "--db", str(edited["db"]), "-o", str(out)]) == 0
    passages = json.loads(out.read_text(encoding="utf-8"))
    src = _source()
    assert len(passages) == len(src)
    first = passages[0]
    q0 = src[0]["test"][0]
    assert first["article"] == src[0]["text"]
    assert first["answers"][0] == q0["mcq"]["key"]
    assert "difficulty" not in json.dumps(first)  # RACE has no place for annotations


def test_expmrc_export_writes_the_evidence_the_window_shows(tmp_path, monkeypatch, capsys):
    db = tmp_path / "expmrc.db"
    assert main(["import", str(EXPMRC), "--db", str(db)]) == 0
    doc = json.loads(EXPMRC.read_text(encoding="utf-8"))
    first = doc["data"][0]
    item = f"{first['id']}-0"
    words = first["article"].split(". ")[0]
    _annotate(db, [{"item": item, "field": "span.add", "value": {"role": "evidence", "start": 0, "end": len(words)}},
                   {"item": item, "field": "span.add",  # a model suggestion nobody accepted
                    "value": {"role": "evidence", "start": 0, "end": 10, "origin": "model"}}],
              "tester", monkeypatch, capsys)
    capsys.readouterr()
    out = tmp_path / "out.json"
    assert main(["export", "expmrc", "--db", str(db), "-o", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got["data"][1:] == doc["data"][1:]
    evidences = got["data"][0]["evidences"]
    # the imported references as they were, then tester's; the unaccepted model span is not written
    assert evidences[0] == first["evidences"][0] + [words]
    assert evidences[1:] == first["evidences"][1:]
    from desktop.domain import resolve
    with Store.open(db, annotator="tester", read_only=True) as store:
        q = store.question(item, annotator="tester")
        shown = [q_span for q_span in resolve.item(q, "tester").evidence]
    assert [first["article"][s.start:s.end] for s in shown if s.annotator == "tester"] == [words]


# ---------------------------------------------------------------------------- merge


def test_merge_of_the_colleagues_store_gives_what_their_window_showed(edited, tmp_path, qtbot):
    mine = tmp_path / "mine.db"
    assert main(["import", str(GREEN), "--db", str(mine)]) == 0
    assert main(["merge", str(edited["db"]), "--db", str(mine)]) == 0
    out = tmp_path / "merged.jsonl"
    assert main(["export", "embrace", "--db", str(mine), "-o", str(out)]) == 0
    values = _first(out).assessments[0].values
    assert values == {**_imported_values(), "ni": "2"}
    assert f"Total difficulty: {_expected_total():g}" in _window_total(qtbot, mine, "tester")


def test_merge_of_the_colleagues_export_under_their_name(edited, tmp_path, qtbot):
    delivered = tmp_path / "tester.jsonl"
    assert main(["export", "embrace", "--db", str(edited["db"]), "-o", str(delivered), "--annotator",
                 "tester"]) == 0
    mine = tmp_path / "mine.db"
    assert main(["import", str(GREEN), "--db", str(mine)]) == 0
    assert main(["merge", str(delivered), "--db", str(mine), "--annotator", "colleague"]) == 0
    with Store.open(mine, read_only=True) as store:
        q = store.question("0_0")
    theirs = next(a for a in q.assessments if a.annotator == "colleague")
    assert theirs.values == {**_imported_values(), "ni": "2"}  # the whole of what tester saw, not NI alone
    assert f"Total difficulty: {_expected_total():g}" in _window_total(qtbot, mine, "colleague")
    out = tmp_path / "out.jsonl"
    assert main(["export", "embrace", "--db", str(mine), "-o", str(out)]) == 0
    assert _first(out).assessments[0].values == {**_imported_values(), "ni": "2"}


# ---------------------------------------------------------------------------- report, help, dialog


def test_the_corpus_report_totals_the_resolved_values(edited):
    from desktop.reports import corpus_items

    with Store.open(edited["db"], read_only=True) as store:
        corpus = corpus_items.build(corpus_items.tables_from_store(store, "embrace"), suggestions=False)
    row = corpus.frame.set_index("item_id").loc["0_0"]
    assert row["total"] == _expected_total()
    assert row["assessed_by"] == "imported;tester"


def test_help_and_dialog_say_which_layer_is_written(edited, qtbot, capsys):
    from desktop.app.export import LAYERS

    with pytest.raises(SystemExit):
        main(["export", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "a corrected NI keeps every other imported value" in text and "--annotator NAME" in text
    from desktop.ui.backend import Backend
    from desktop.ui.dialogs.export import ExportDialog
    from desktop.ui.main_window import MainWindow

    window = MainWindow(Backend.open(str(edited["db"]), annotator="tester"), facts=False)
    qtbot.addWidget(window)
    try:
        dialog = ExportDialog(window)
        qtbot.addWidget(dialog)
        assert LAYERS in dialog.layers_note.text()
        labels = [dialog.layer.itemText(i) for i in range(dialog.layer.count())]
        assert any("tester's over the imported" in label for label in labels), labels
    finally:
        window.close()
        window.backend.close()


def test_the_writer_and_the_window_resolve_through_one_function():
    """The EMBRACE writer, the CSV table and the window's item view call desktop.domain.resolve."""
    import inspect

    from desktop.app import export
    from desktop.ui import backend

    for fn in (embrace.question_record, export.table, backend.Backend.load, backend.question_facts):
        assert "resolve." in inspect.getsource(fn), fn
