"""`mcqlens merge` of comments and answerability labels, which the store keeps per annotator.

Alice and Bob each import embrace_green.jsonl (19 of its 200 items carry an
annotator's comment in the file) and comment or label items; Bob's store is merged
into Alice's.  Each annotator's comments and label are a layer: another annotator's
are added beside, the same annotator's other version is a conflict kept as
`<annotator>@<label>`, and merging again changes nothing.
"""
import json
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.app import merge as m
from desktop.domain.changes import Change
from desktop.formats import read
from desktop.store import Store
from desktop.store.adjudication import annotator_fields, item_disagreements

GREEN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


@pytest.fixture(scope="module")
def green():
    (ds,) = read(GREEN)
    questions = list(ds.questions())
    commented = [q for q in questions if q.comments]
    plain = [q for q in questions if not q.comments]
    return questions, commented, plain


def _fields(db) -> dict:
    """Every item's comments, labels and notes per annotator, and the history length."""
    with Store.open(db) as store:
        out = {}
        for row in store.items():
            f = annotator_fields(store, row.item_id)
            out[row.item_id] = (f.comments, f.answerability, f.notes)
        return {"fields": out, "history": len(store.history())}


@pytest.fixture
def stores(tmp_path, green):
    _, commented, plain = green
    c, p = commented[0].id, plain[0].id
    ours, theirs = tmp_path / "alice.db", tmp_path / "bob.db"
    with Store.open(ours, annotator="alice") as a:
        a.import_datasets(read(GREEN), file=GREEN)
        a.apply(Change(p, "comment", "the stem gives the key away"))
        a.apply(Change(p, "answerability", "answerable"))
    with Store.open(theirs, annotator="bob") as b:
        b.import_datasets(read(GREEN), file=GREEN)
        b.apply(Change(c, "comments", ["two alternatives are synonyms", "B is also defensible"]))
        b.apply(Change(p, "answerability", "unsure"))
        # Alice's work copied to Bob's machine: the same comment, another label
        b.apply(Change(p, "comment", "the stem gives the key away", "alice"))
        b.apply(Change(p, "answerability", "unanswerable", "alice"))
    return ours, theirs, c, p


def test_comments_and_labels_come_in_per_annotator(stores, green):
    ours, theirs, c, p = stores
    _, commented, _ = green
    with Store.open(ours) as store:
        datasets, incoming = m.read_other(str(theirs))
        plan = m.merge(store, datasets, "bob", incoming)
        # the one conflict: Alice's label on p differs; hers stays, Bob's copy is kept beside
        assert [(k.item, k.field, k.annotator, k.ours, k.theirs, k.kept_as) for k in plan.conflicts] == [
            (p, "answerability", "alice", "answerable", "unanswerable", "alice@bob")]
        on_c, on_p = annotator_fields(store, c), annotator_fields(store, p)
        # the file's comment stays the imported annotator's, as in the file; Bob's two come beside
        assert on_c.comments == {"imported": commented[0].comments,
                                 "bob": ["two alternatives are synonyms", "B is also defensible"]}
        assert on_p.comments == {"alice": ["the stem gives the key away"]}
        assert on_p.answerability == {"alice": "answerable", "alice@bob": "unanswerable", "bob": "unsure"}
        # each added layer is an edit with its history row, attributed to its annotator
        added = {(h.annotator, h.field) for h in store.history() if h.kind == "change"} - {
            ("alice", "comment"), ("alice", "answerability")}
        assert added == {("bob", "comments"), ("bob", "answerability"), ("alice@bob", "answerability")}


def test_merging_twice_changes_nothing(stores):
    ours, theirs, c, p = stores
    assert main(["merge", str(theirs), "--db", str(ours)]) == 0
    first = _fields(ours)
    assert main(["merge", str(theirs), "--db", str(ours)]) == 0
    assert _fields(ours) == first
    # Bob takes Alice's store in as well, twice: Alice's comment on p arrives once
    assert main(["merge", str(ours), "--db", str(theirs)]) == 0
    bob = _fields(theirs)
    assert bob["fields"][p][0]["alice"] == ["the stem gives the key away"]
    assert main(["merge", str(ours), "--db", str(theirs)]) == 0
    assert _fields(theirs) == bob


def test_cli_lists_label_conflicts(stores, capsys):
    ours, theirs, c, p = stores
    assert main(["merge", str(theirs), "--db", str(ours)]) == 0
    out = capsys.readouterr().out
    assert f'conflict: item {p}, answerability, annotator alice: ours "answerable" / theirs "unanswerable"' in out


def test_a_colleagues_export_brings_the_files_comments_as_hers(tmp_path, green):
    _, commented, _ = green
    db = tmp_path / "ours.db"
    with Store.open(db) as store:
        store.import_datasets(read(GREEN), file=GREEN)
    assert main(["merge", str(GREEN), "--db", str(db), "--annotator", "carol"]) == 0
    with Store.open(db) as store:
        carols = {row.item_id: f.comments["carol"] for row in store.items()
                  if "carol" in (f := annotator_fields(store, row.item_id)).comments}
        assert carols == {q.id: q.comments for q in commented}
        assert len(carols) == 19
        # two annotators saying the same is no disagreement
        assert not [d for d in item_disagreements(store, commented[0].id) if d["field"] == "comments"]
    before = _fields(db)
    assert main(["merge", str(GREEN), "--db", str(db), "--annotator", "carol"]) == 0
    assert _fields(db) == before


def test_new_items_from_a_store_keep_whose_comments_they_are(tmp_path, stores, green):
    _, commented, _ = green
    ours, theirs, c, p = stores
    empty = tmp_path / "empty.db"
    Store.open(empty).close()
    assert main(["merge", str(theirs), "--db", str(empty)]) == 0
    with Store.open(empty) as store:
        assert len(store.items()) == 200
        on_c = annotator_fields(store, c)
        assert on_c.comments == {"imported": commented[0].comments,
                                 "bob": ["two alternatives are synonyms", "B is also defensible"]}
        assert annotator_fields(store, p).answerability == {"alice": "unanswerable", "bob": "unsure"}
        n_commented = sum(1 for row in store.items() if annotator_fields(store, row.item_id).comments.get("imported"))
        assert n_commented == len(commented)
    snapshot = _fields(empty)
    assert main(["merge", str(theirs), "--db", str(empty)]) == 0
    assert _fields(empty) == snapshot


def test_comment_and_label_disagreements_are_adjudicated(stores):
    ours, theirs, c, p = stores
    with Store.open(ours) as store:
        datasets, incoming = m.read_other(str(theirs))
        m.merge(store, datasets, "bob", incoming)
        found = {d["field"]: d for d in item_disagreements(store, p)}
        assert found["answerability"]["values"] == {"alice": "answerable", "alice@bob": "unanswerable",
                                                    "bob": "unsure"}
        m.adopt(store, p, "answerability", "bob")
        m.adopt(store, c, "comments", "bob")
        assert annotator_fields(store, p).answerability["gold"] == "unsure"
        assert annotator_fields(store, c).comments["gold"] == ["two alternatives are synonyms",
                                                               "B is also defensible"]
        gold = [(h.item, h.field, json.dumps(h.after)) for h in store.history() if h.annotator == "gold"]
        assert gold == [(p, "answerability", '"unsure"'),
                        (c, "comments", '["two alternatives are synonyms", "B is also defensible"]')]
        assert {d["field"]: d for d in item_disagreements(store, p)}["answerability"]["adjudicated"] is True
