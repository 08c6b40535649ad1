"""The NOTA transform on the ExpMRC RACE+ dev set (../shared/data/expmrc): exact, one NOTA
alternative per question, reproducible for a seed."""
import json
from collections import Counter
from pathlib import Path

import pytest

from desktop.domain import nota
from desktop.domain.model import ANSWERABLE, UNANSWERABLE
from desktop.formats import expmrc

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"
CS = ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"]


@pytest.fixture(scope="module")
def raw():
    return json.loads(DATA.read_text(encoding="utf-8"))["data"]


@pytest.fixture(scope="module")
def passages():
    return expmrc.read(DATA).passages


def test_file_has_561_questions(raw, passages):
    assert sum(len(r["questions"]) for r in raw) == 561
    assert sum(len(p.questions) for p in passages) == 561


@pytest.mark.parametrize("c", CS)
def test_transform_is_exact_for_every_c(c, raw, passages):
    out, changes = nota.transform(passages, c, seed=1)
    n = sum(len(r["questions"]) for r in raw)
    # ExpMRC has neither split nor level: the whole source is one group of N = 561.
    unanswerable = [q for p in out for q in p.questions if q.answerability == UNANSWERABLE]
    assert len(unanswerable) == nota.replaced_count(c, n)
    assert len(changes) == n
    by_id = {r["id"]: r for r in raw}
    for p in out:
        rec = by_id[p.id]
        for j, q in enumerate(p.questions):
            original = rec["options"][j]
            key = "ABCDE".index(rec["answers"][j])
            assert q.alternatives.count(nota.NOTA_TEXT) == 1
            r = q.alternatives.index(nota.NOTA_TEXT)
            # every other alternative is the source's, in the source's place
            assert [a for i, a in enumerate(q.alternatives) if i != r] == \
                [a for i, a in enumerate(original) if i != r]
            assert q.extra["nota"]["original"] == original[r]
            if q.answerability == UNANSWERABLE:
                assert r == key and q.key == r
            else:
                assert q.answerability == ANSWERABLE and r != key and q.key == key


def test_expected_counts_from_half_up_rounding(passages):
    # 561 × C, half-up: 56.1 → 56, 280.5 → 281, 392.7 → 393
    got = [sum(not ch.answerable for ch in nota.transform(passages, c, seed=3)[1]) for c in CS]
    assert got == [0, 56, 112, 168, 224, 281, 337, 393, 449, 505, 561]


def test_rounding_is_half_up_not_bankers():
    assert round(0.5 * 5) == 2 and nota.replaced_count(0.5, 5) == 3
    assert round(0.1 * 5) == 0 and nota.replaced_count(0.1, 5) == 1
    assert nota.replaced_count("0.5", 3) == 2
    assert nota.replaced_count(0.3, 10) == 3 and nota.replaced_count(0.7, 10) == 7
    with pytest.raises(ValueError):
        nota.replaced_count(1.1, 10)


def test_same_seed_same_output_and_input_untouched(raw, passages):
    before = [list(q.alternatives) for p in passages for q in p.questions]
    a, _ = nota.transform(passages, 0.4, seed=7)
    b, _ = nota.transform(passages, 0.4, seed=7)
    c, _ = nota.transform(passages, 0.4, seed=8)
    alts = lambda ps: [(q.answerability, tuple(q.alternatives)) for p in ps for q in p.questions]
    assert alts(a) == alts(b)
    assert alts(a) != alts(c)
    assert [list(q.alternatives) for p in passages for q in p.questions] == before
    assert [q.key for p in passages for q in p.questions] == \
        ["ABCDE".index(x) for r in raw for x in r["answers"]]


def test_groups_split_by_level(passages):
    # Give the passages RACE's split × level structure: each group must get its own round(C × N).
    import copy
    ps = copy.deepcopy(passages)
    for i, p in enumerate(ps):
        p.split, p.level = ("test", "high") if i % 3 else ("test", "middle")
    n_group = Counter(p.level for p in ps for _ in p.questions)
    out, _ = nota.transform(ps, 0.5, seed=1)
    got = Counter(p.level for p in out for q in p.questions if q.answerability == UNANSWERABLE)
    assert got == {lvl: nota.replaced_count(0.5, n) for lvl, n in n_group.items()}
    # two groups rounded separately differ from one group of all
    assert sum(got.values()) == sum(nota.replaced_count(0.5, n) for n in n_group.values())


def test_replicas_differ_and_train_gets_one_copy(passages):
    import copy
    ps = copy.deepcopy(passages)
    for i, p in enumerate(ps):
        p.split = "train" if i < 40 else "test"
    copies = nota.transform_replicas(ps, 0.3, seed=1, replicas=5)
    assert len(copies) == 5
    assert sum(p.split == "train" for p in copies[0]) == 40
    assert all(p.split == "test" for cp in copies[1:] for p in cp)
    # the key keeps its place (NOTA takes it): replicas differ in which alternative was replaced
    replaced = {tuple(q.extra["nota"]["replaced"] for p in cp for q in p.questions) for cp in copies[1:]}
    assert len(replaced) == 4  # differently seeded
    n_test = sum(len(p.questions) for p in ps if p.split == "test")
    for cp in copies:
        assert sum(q.answerability == UNANSWERABLE for p in cp if p.split == "test"
                   for q in p.questions) == nota.replaced_count(0.3, n_test)
    assert nota.transform_replicas(ps, 0.3, seed=1, replicas=5)[3][0].questions[0].alternatives == \
        copies[3][0].questions[0].alternatives


def test_two_alternative_question_and_custom_text(passages):
    two = [p for p in passages if any(len(q.alternatives) == 2 for q in p.questions)]
    assert two, "ExpMRC has one question with two options"
    for c in (0, 1):
        out, _ = nota.transform(two, c, seed=2, text="not enough information")
        q = next(q for q in out[0].questions if len(q.alternatives) == 2)
        assert q.alternatives.count("not enough information") == 1
        assert (q.answerability == UNANSWERABLE) == (c == 1)
