"""`mcqlens merge`: two annotators' stores of the EMBRACE green file brought together.

The story: Alice and Bob each import embrace_green.jsonl into their own store and work;
Bob's store is merged into Alice's.  Different annotators' values become layers side by
side; the same annotator with a different value is a conflict that keeps both; merging
again changes nothing; an adjudicator then chooses a version as `gold`.
"""
import json
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.app import merge as m
from desktop.domain.changes import Change
from desktop.formats import read
from desktop.store import Store

GREEN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"
EXPMRC = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


def _snapshot(db) -> dict:
    """Every layer of every item, and the number of history rows: what a merge may change."""
    with Store.open(db) as store:
        layers = {}
        for ds in store.load_datasets():
            for q in ds.questions():
                notes = {a: n for a in store.annotators() if (n := store.note(q.id, a))}
                layers[q.id] = sorted((a, f, repr(v)) for (a, f), v in m.layers(q, notes).items())
        return {"layers": layers, "history": len(store.history()), "annotators": store.annotators()}


@pytest.fixture
def stores(tmp_path):
    (ds,) = read(GREEN)
    q0, q1 = ds.passages[0].questions[0], ds.passages[0].questions[1]
    text = ds.passages[0].text
    ours, theirs = tmp_path / "alice.db", tmp_path / "bob.db"
    with Store.open(ours, annotator="alice") as a:
        a.import_datasets(read(GREEN), file=GREEN)
        a.apply(Change(q0.id, "span.add", {"role": "evidence", "start": 0, "end": 40}))
        a.apply(Change(q1.id, "difficulty.pod", "none"))
        a.apply(Change(q1.id, "note", "the stem repeats the title"))
    with Store.open(theirs, annotator="bob") as b:
        b.import_datasets(read(GREEN), file=GREEN)
        b.apply(Change(q0.id, "span.add", {"role": "evidence", "start": 10, "end": 60}))
        b.apply(Change(q1.id, "problem.add", {"type": "punctuation_errors", "element": "question"}))
        # the same work of Alice's, copied to Bob's machine, and one value she changed there
        b.apply(Change(q0.id, "span.add", {"role": "evidence", "start": 0, "end": 40}, "alice"))
        b.apply(Change(q1.id, "difficulty.pod", "inference", "alice"))
        b.apply(Change(q1.id, "note", "the stem repeats the title", "alice"))
    return ours, theirs, q0.id, q1.id, text


def test_layers_are_added_and_conflicts_keep_both(stores):
    ours, theirs, q0, q1, text = stores
    with Store.open(ours) as store:
        datasets, notes = m.read_other(str(theirs))
        plan = m.merge(store, datasets, "bob", notes)
        assert plan.new_items == []
        # Bob's evidence and tag are new layers; Alice's pod differs: one conflict
        assert [(c.item, c.field, c.annotator, c.ours, c.theirs, c.kept_as) for c in plan.conflicts] == [
            (q1, "difficulty.pod", "alice", "none", "inference", "alice@bob")]
        first = store.question(q0)
        evidence = {(s.annotator, s.start, s.end) for s in first.spans if s.role == "evidence"}
        assert evidence == {("alice", 0, 40), ("bob", 10, 60)}
        second = store.question(q1)
        pods = {a.annotator: a.values.get("pod") for a in second.assessments}
        assert pods["alice"] == "none" and pods["alice@bob"] == "inference"
        assert pods["imported"] == read(GREEN)[0].passages[0].questions[1].assessments[0].values["pod"]
        assert [(t.annotator, t.type) for t in second.problems if t.annotator == "bob"] == [
            ("bob", "punctuation_errors")]
        assert store.note(q1, "alice") == "the stem repeats the title"
        # every added layer is an edit with its history row
        assert {h.annotator for h in store.history(q0) if h.field == "span.add"} == {"alice", "bob"}


def test_merging_twice_changes_nothing(stores):
    ours, theirs, *_ = stores
    assert main(["merge", str(theirs), "--db", str(ours)]) == 0
    after_first = _snapshot(ours)
    assert main(["merge", str(theirs), "--db", str(ours)]) == 0
    assert _snapshot(ours) == after_first
    # and the other way round: Bob takes Alice's store in, twice
    assert main(["merge", str(ours), "--db", str(theirs)]) == 0
    bob = _snapshot(theirs)
    assert main(["merge", str(ours), "--db", str(theirs)]) == 0
    assert _snapshot(theirs) == bob


def test_cli_lists_conflicts(stores, capsys, tmp_path):
    ours, theirs, q0, q1, _ = stores
    report = tmp_path / "conflicts.json"
    assert main(["merge", str(theirs), "--db", str(ours), "--conflicts", str(report)]) == 0
    out = capsys.readouterr().out
    assert f"conflict: item {q1}, difficulty.pod, annotator alice" in out and "kept as alice@bob" in out
    assert json.loads(report.read_text())[0]["theirs"] == "inference"
    assert main(["merge", str(theirs), "--db", str(ours)]) == 0
    again = capsys.readouterr().out
    assert again.startswith("added 0 items and 0 annotations") and "kept as alice@bob" in again


def test_new_items_come_in_whole_and_once(tmp_path):
    # a store of EMBRACE items takes in the ExpMRC file: 561 new items, references as layers
    db = tmp_path / "ours.db"
    with Store.open(db) as store:
        store.import_datasets(read(GREEN), file=GREEN)
    assert main(["merge", str(EXPMRC), "--db", str(db)]) == 0
    with Store.open(db) as store:
        assert len(store.items(source="expmrc")) == 561
        q = store.question(store.items(source="expmrc")[0].item_id)
        assert {s.annotator for s in q.spans} == {"expmrc-ref-1", "expmrc-ref-2"}
    snapshot = _snapshot(db)
    assert main(["merge", str(EXPMRC), "--db", str(db)]) == 0
    assert _snapshot(db) == snapshot


def test_an_export_attributed_to_a_colleague_agrees_perfectly(tmp_path):
    # Carol's copy of the EMBRACE file: every layer the file calls "imported" becomes hers
    db = tmp_path / "ours.db"
    with Store.open(db) as store:
        store.import_datasets(read(GREEN), file=GREEN)
    assert main(["merge", str(GREEN), "--db", str(db), "--annotator", "carol"]) == 0
    out = tmp_path / "agreement"
    assert main(["agreement", "--db", str(db), "-o", str(out)]) == 0
    report = json.loads((out / "agreement.json").read_text())
    overall = report["overall"]
    with_bases = sum(any(s.role == "basis" for s in q.spans) for ds in read(GREEN) for q in ds.questions())
    assert overall["basis_f1"]["items"] == with_bases > 150
    assert overall["basis_f1"]["value"] == pytest.approx(100.0)
    assert overall["difficulty"]["pod"]["annotators"] == ["carol", "imported"]
    assert overall["difficulty"]["pod"]["kappa"] == pytest.approx(1.0)
    assert overall["difficulty_total"]["items"] == 200


def test_adjudication_stores_gold_with_history(stores):
    ours, theirs, q0, q1, _ = stores
    with Store.open(ours, annotator="alice") as store:
        datasets, notes = m.read_other(str(theirs))
        m.merge(store, datasets, "bob", notes)
        found = {d["field"]: d for d in m.disagreements(store.question(q1))}
        assert set(found["difficulty.pod"]["values"]) >= {"alice", "alice@bob", "imported"}
        ids = m.adopt(store, q1, "difficulty.pod", "alice@bob")
        assert len(ids) == 1
        gold = {a.annotator: a.values for a in store.question(q1).assessments}["gold"]
        assert gold == {"pod": "inference"}
        assert [h.field for h in store.history(q1) if h.annotator == "gold"] == ["difficulty.pod"]
        assert m.disagreements(store.question(q1))[0]["adjudicated"] is True
        # evidence: choose a final version by hand, then change one's mind; gold holds the last
        m.adjudicate(store, q0, "evidence", [(0, 40), (10, 60)])
        m.adjudicate(store, q0, "evidence", [(10, 60)])
        gold_spans = [(s.start, s.end) for s in store.question(q0).spans if s.annotator == "gold"]
        assert gold_spans == [(10, 60)]
        assert [h.field for h in store.history(q0) if h.annotator == "gold"] == [
            "span.add", "span.add", "span.remove", "span.remove", "span.add"]
        # gold is not a rater: agreement on q0's evidence is Alice's and Bob's alone
        from desktop.app.agreement import agreement_report
        row = next(r for r in agreement_report(store)["items"] if r["item"] == q0)
        assert row["evidence_annotators"] == ["alice", "bob"]
