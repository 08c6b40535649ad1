"""Store.apply / undo / redo / history on real EMBRACE items; every change leaves its history row."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop import formats
from desktop.domain.changes import Change
from desktop.domain.errors import StoreError
from desktop.domain.model import BASIS, EVIDENCE, Prediction
from desktop.store import Store

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"


@pytest.fixture(scope="module")
def green():
    return formats.read(GREEN)


@pytest.fixture
def store(green):
    s = Store.memory(annotator="anna")
    s.import_datasets(green, file=None)
    yield s
    s.close()


def first_record() -> dict:
    return json.loads(GREEN.read_text(encoding="utf-8").splitlines()[0])


def test_comment_change_writes_history_and_moves_status(store):
    q = first_record()["test"][0]
    assert store.items()[0].status == "untouched"
    before = store.question(q["id"]).comments
    assert before == q["annotations"]["comments"]
    hid = store.apply(Change(q["id"], "comment", "the stem gives the answer away"))
    assert store.question(q["id"]).comments == before + ["the stem gives the answer away"]
    row = store.history(q["id"])[-1]
    assert (row.id, row.annotator, row.field, row.before, row.after, row.kind) == (
        hid, "anna", "comment", [], ["the stem gives the answer away"], "change")
    assert store.items(status="in progress")[0].item_id == q["id"]
    # status set explicitly is kept as set
    store.apply(Change(q["id"], "status", "done"))
    assert [r.item_id for r in store.items(status="done")] == [q["id"]]


def test_undo_redo_span_add_remove_update(store):
    rec = first_record()
    q = rec["test"][0]
    n_bases = sum(1 for b in q["annotations"]["bases"].values() if b)
    assert len(store.question(q["id"]).spans_with(BASIS)) == n_bases
    h1 = store.apply(Change(q["id"], "span.add", {"role": "evidence", "start": 0, "end": 30}))
    added = store.history(q["id"])[-1].after
    assert added["id"] and store.question(q["id"]).spans_with(EVIDENCE)[0].text(rec["text"]) == rec["text"][:30]
    basis = store.question(q["id"]).spans_with(BASIS)[0]
    store.apply(Change(q["id"], "span.update", {"id": basis.id, "start": basis.start, "end": basis.end + 1}))
    store.apply(Change(q["id"], "span.remove", {"id": added["id"]}))
    assert not store.question(q["id"]).spans_with(EVIDENCE)
    # undo the three, newest first
    assert store.undo().field == "span.remove"
    assert [s.id for s in store.question(q["id"]).spans_with(EVIDENCE)] == [added["id"]]
    assert store.undo().field == "span.update"
    assert store.question(q["id"]).spans_with(BASIS)[0].end == basis.end
    undo_add = store.undo()
    assert (undo_add.kind, undo_add.ref) == ("undo", h1)
    assert not store.question(q["id"]).spans_with(EVIDENCE)
    assert store.history()[[r.id for r in store.history()].index(h1)].undone
    # redo brings the same span back under the same id
    redo = store.redo()
    assert (redo.kind, redo.ref) == ("redo", h1)
    assert [s.id for s in store.question(q["id"]).spans_with(EVIDENCE)] == [added["id"]]
    # a fresh edit ends the redo chain
    store.apply(Change(q["id"], "comment", "x"))
    assert store.redo() is None and not store.can_redo()


def test_difficulty_is_per_annotator_and_undo_removes_own_assessment(store):
    q = first_record()["test"][0]
    imported = store.question(q["id"]).assessments
    assert len(imported) == 1 and imported[0].extra["embrace_difficulty"] == q["annotations"]["difficulty"]
    store.apply(Change(q["id"], "difficulty.toi", imported[0].values.get("toi")))
    store.apply(Change(q["id"], "multiple_texts", True))
    store.apply(Change(q["id"], "unit_type", "vocabulary"))
    mine = [a for a in store.question(q["id"]).assessments if a.annotator == "anna"]
    assert mine[0].values == {"toi": imported[0].values.get("toi")}
    assert (mine[0].multiple_texts, mine[0].unit_type) == (True, "vocabulary")
    # the imported assessment is untouched
    assert [a for a in store.question(q["id"]).assessments if a.annotator != "anna"] == imported
    for _ in range(3):
        store.undo()
    assert store.question(q["id"]).assessments == imported
    assert store.items()[0].has_assessment


def test_problems_answerability_note(store):
    q = first_record()["test"][0]
    n = len(store.question(q["id"]).problems)
    store.apply(Change(q["id"], "problem.add", {"type": "spelling_errors", "element": "question", "note": "teh"}))
    tags = store.question(q["id"]).problems
    assert len(tags) == n + 1 and tags[-1].note == "teh" and tags[-1].annotator == "anna"
    store.apply(Change(q["id"], "problem.remove", {"id": tags[-1].id}))
    assert len(store.question(q["id"]).problems) == n
    store.apply(Change(q["id"], "answerability", "unanswerable"))
    assert store.question(q["id"]).answerability == "unanswerable"
    assert store.items()[0].answerability == "unanswerable"
    store.apply(Change(q["id"], "note", "distractor C is also right"))
    assert store.note(q["id"]) == "distractor C is also right"
    assert store.items()[0].n_problems == n


@pytest.mark.parametrize("change, words", [
    (Change("0_0", "answerability", "maybe"), "answerability"),
    (Change("0_0", "status", "finished"), "status"),
    (Change("0_0", "span.add", {"role": "evidence", "start": 5, "end": 10 ** 6}), "outside the passage"),
    (Change("0_0", "span.add", {"role": "basis", "start": 0, "end": 5, "alternative": 9}), "does not exist"),
    (Change("0_0", "span.remove", {"id": 10 ** 9}), "no span"),
    (Change("0_0", "colour", "red"), "unknown field"),
    (Change("no-such-item", "comment", "x"), "unknown item"),
])
def test_bad_changes_are_refused_without_a_trace(store, change, words):
    n = len(store.history())
    with pytest.raises(StoreError, match=words):
        store.apply(change)
    assert len(store.history()) == n and store.items()[0].status == "untouched"


def test_undo_refuses_to_overwrite_someone_elses_later_edit(store):
    q = first_record()["test"][0]["id"]
    hid = store.apply(Change(q, "span.add", {"role": "evidence", "start": 0, "end": 5}))
    sid = store.history(q)[-1].after["id"]
    assert store.history(q)[-1].id == hid
    store.apply(Change(q, "span.update", {"id": sid, "start": 0, "end": 7}, annotator="boris"))
    with pytest.raises(StoreError, match="changed since"):
        store.undo("anna")
    assert [(s.start, s.end) for s in store.question(q).spans if s.id == sid] == [(0, 7)]
    assert store.undo("boris").after["end"] == 5


def test_status_is_each_annotators_own(store):
    q = first_record()["test"][0]["id"]
    store.apply(Change(q, "status", "done"))  # anna, the store's annotator
    store.apply(Change(q, "comment", "unclear stem", annotator="boris"))  # boris's first edit
    assert store.status(q) == "done" and store.status(q, "boris") == "in progress"
    assert store.statuses(q) == {"anna": "done", "boris": "in progress"}
    rows = {a: store.items(annotator=a)[0] for a in ("anna", "boris", "carl")}
    assert [rows[a].status for a in ("anna", "boris", "carl")] == ["done", "in progress", "untouched"]
    assert rows["carl"].n_done == 1  # anna finished it
    assert [r.item_id for r in store.items(status="done", annotator="boris")] == []
    assert store.undo("anna").after == "untouched"  # boris's edit of another field is no obstacle
    assert store.statuses(q) == {"boris": "in progress"}


def test_history_and_undo_persist_across_reopen(tmp_path, green):
    db = tmp_path / "a.db"
    with Store.open(db, annotator="anna") as s:
        s.import_datasets(green, file=str(GREEN))
        hid = s.apply(Change("0_0", "comment", "first"))
        s.apply(Change("0_0", "comment", "second"))
    with Store.open(db, annotator="anna") as s:
        assert [r.after for r in s.history("0_0")] == [["first"], ["second"]]
        s.undo()
        assert s.question("0_0").comments[-1] == "first"
    with Store.open(db, annotator="anna") as s:
        assert s.can_redo() and s.redo().ref == hid + 1
        assert s.question("0_0").comments[-1] == "second"
        assert s.history(since=hid)[0].id == hid + 1


def test_load_datasets_for_one_annotator(store):
    store.apply(Change("0_0", "span.add", {"role": "evidence", "start": 0, "end": 10}))
    store.apply(Change("0_0", "span.add", {"role": "evidence", "start": 0, "end": 20}, annotator="boris"))
    q_all = next(q for d in store.load_datasets() for q in d.questions() if q.id == "0_0")
    q_anna = next(q for d in store.load_datasets(annotator="anna") for q in d.questions() if q.id == "0_0")
    assert sorted(s.end for s in q_all.spans_with(EVIDENCE)) == [10, 20]
    assert [s.end for s in q_anna.spans_with(EVIDENCE)] == [10]
    assert len(q_anna.spans_with(BASIS)) == len(q_all.spans_with(BASIS))


def test_predictions_upsert(store):
    n = store.add_predictions([("0_0", Prediction("tiny", "shortcut", [0.1, 0.2, 0.3, 0.4]))])
    assert n == 1
    store.add_predictions([{"item": "0_0", "model_id": "tiny", "input_format": "shortcut",
                            "probabilities": [0.7, 0.1, 0.1, 0.1]}])
    assert [p.probabilities for p in store.predictions("0_0")] == [[0.7, 0.1, 0.1, 0.1]]
    assert store.question("0_0").predictions[0].model_id == "tiny"
    with pytest.raises(StoreError, match="unknown item"):
        store.add_predictions([("nope", Prediction("tiny", "standard", [1.0, 0.0]))])


def test_items_and_search(store, green):
    items = store.items()
    assert [i.item_id for i in items] == [q.id for q in green[0].questions()]
    assert items[0].n_bases == len(green[0].passages[0].questions[0].spans_with(BASIS))
    word = green[0].passages[0].questions[0].stem.split()[0]
    hits = store.search(word)
    assert "0_0" in hits and set(hits) <= {i.item_id for i in items}
    assert store.search("no such words anywhere 12345") == []
    # LIKE wildcards are taken literally
    assert store.search("%") == [i.item_id for i in items if any("%" in t for t in
                                                                 _texts(store, i.item_id))]


def _texts(store, item_id):
    q = store.question(item_id)
    return [q.id, q.stem, *q.alternatives, store.passage(q.passage_id).text]


def test_batch_is_all_or_nothing(store):
    n = len(store.history())
    with pytest.raises(StoreError):
        with store.batch():
            store.apply(Change("0_0", "comment", "kept only if all succeed"))
            store.apply(Change("0_0", "status", "no such status"))
    assert len(store.history()) == n and store.question("0_0").comments == first_record()["test"][0][
        "annotations"]["comments"]
    with store.batch():
        a = store.apply(Change("0_0", "comment", "one"))
        b = store.apply(Change("0_0", "status", "done"))
    assert [r.id for r in store.history()[-2:]] == [a, b]
