"""Merge planning on one real item (the first ExpMRC RACE+ dev question), without a store."""
import copy
from pathlib import Path

import pytest

from desktop.app import merge as m
from desktop.domain.model import EVIDENCE, ProblemTag, Span
from desktop.formats import expmrc

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


@pytest.fixture(scope="module")
def item():
    ds = expmrc.read(DATA)
    return ds.passages[0].questions[0]


def _with(q, *spans, tags=()):
    q = copy.deepcopy(q)
    q.spans += list(spans)
    q.problems += list(tags)
    return q


def test_released_references_are_two_layers(item):
    found = m.layers(item)
    assert set(found) == {("expmrc-ref-1", "evidence"), ("expmrc-ref-2", "evidence")}
    changes, conflicts, unchanged = m.plan_question(item, copy.deepcopy(item), "x")
    assert (changes, conflicts, unchanged) == ([], [], 2)


def test_other_annotators_are_layers_not_conflicts(item):
    theirs = _with(item, Span(0, 10, EVIDENCE, annotator="bob", origin="human"))
    changes, conflicts, _ = m.plan_question(item, theirs, "x")
    assert conflicts == []
    assert [(c.field, c.annotator, c.value["start"], c.value["end"]) for c in changes] == [
        ("span.add", "bob", 0, 10)]


def test_same_annotator_other_spans_conflict_and_find_a_free_alias(item):
    ours = _with(item, Span(0, 10, EVIDENCE, annotator="bob", origin="human"),
                 Span(7, 9, EVIDENCE, annotator="bob@x", origin="human"))
    theirs = _with(item, Span(5, 15, EVIDENCE, annotator="bob", origin="human"),
                   Span(20, 30, EVIDENCE, annotator="bob", origin="human"))
    changes, conflicts, _ = m.plan_question(ours, theirs, "x")
    assert [(c.field, c.annotator, c.ours, c.theirs, c.kept_as) for c in conflicts] == [
        ("evidence", "bob", [[0, 10]], [[5, 15], [20, 30]], "bob@x#2")]
    assert {(c.annotator, c.value["start"]) for c in changes} == {("bob@x#2", 5), ("bob@x#2", 20)}
    # once kept, the same version is not added again
    ours_after = _with(ours, Span(5, 15, EVIDENCE, annotator="bob@x#2", origin="human"),
                       Span(20, 30, EVIDENCE, annotator="bob@x#2", origin="human"))
    changes, conflicts, _ = m.plan_question(ours_after, theirs, "x")
    assert changes == [] and [c.kept_as for c in conflicts] == ["bob@x#2"]


def test_problem_tags_are_one_layer_per_annotator(item):
    tag = ProblemTag("punctuation_errors", "question", annotator="cy", origin="human")
    other = ProblemTag("extra_spaces", "text", annotator="cy", origin="human")
    changes, conflicts, _ = m.plan_question(item, _with(item, tags=[tag]), "x")
    assert [(c.field, c.value["type"]) for c in changes] == [("problem.add", "punctuation_errors")]
    changes, conflicts, _ = m.plan_question(_with(item, tags=[tag]), _with(item, tags=[tag, other]), "x")
    assert conflicts[0].field == "problems" and conflicts[0].kept_as == "cy@x"
    assert sorted(c.value["type"] for c in changes) == ["extra_spaces", "punctuation_errors"]


def test_adjudication_of_spans_replaces_gold_only(item):
    q = _with(item, Span(0, 10, EVIDENCE, annotator="gold", origin="human", id=99))
    changes = m.adjudication_changes(q, "evidence", [(3, 8)])
    assert [(c.field, c.annotator, c.value) for c in changes] == [
        ("span.remove", "gold", {"id": 99}),
        ("span.add", "gold", {"role": "evidence", "start": 3, "end": 8, "origin": "human"})]
    assert m.disagreements(item) == []  # both released references of this item say the same


def test_disagreements_are_the_items_whose_references_differ():
    ds = expmrc.read(DATA)
    questions = list(ds.questions())
    flagged = {q.id for q in questions if m.disagreements(q)}
    differ = {q.id for q in questions
              if len({(s.start, s.end) for s in q.spans if s.role == EVIDENCE}) > 1}
    assert flagged == differ and 0 < len(flagged) < len(questions)
