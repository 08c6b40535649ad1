"""The default give-away words (issue 28): function words screened in groups, and the words that
take the most away together.  Every number an explanation keeps is checked on real items
against a drop computed here, by cutting the words out of the element texts and scoring the
copy with `inference.score` (not through the explainer): each word's own effect, each screened
group's and the together set's joint effect; and the together set is the best of its
candidate sets, so the ranking's top three take at least as much away as the three strongest
single words do together."""
from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import pytest

import inference
from desktop import formats
from inference import giveaway as G

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
RACE_DEV = DATA / "race" / "dev" / "high"
MODELS = {"per-alternative": ROOT / "tests" / "data" / "tiny_model",
          "one-sequence": ROOT / "tests" / "data" / "tiny_oneseq"}


def _questions():
    green = [q for d in formats.read(str(GREEN)) for q in d.questions()][:6]
    race = [q for d in formats.read(str(RACE_DEV)) for q in d.questions()][:6]
    return green + race


@pytest.fixture(scope="module", params=list(MODELS))
def explained(request):
    model = inference.load_model(MODELS[request.param], device="cpu")
    questions = _questions()
    return model, questions, G.explain(model, questions)


def _elements(q):
    return [(G.STEM, q.stem)] + [(G.element_name(i), a) for i, a in enumerate(q.alternatives)]


def _without(q, cut: set):
    """`q` with the words at (element, start, end) in `cut` deleted, element by element."""
    texts = dict(_elements(q))
    for el in texts:
        for s, e in sorted(((s, e) for c_el, s, e in cut if c_el == el), reverse=True):
            texts[el] = texts[el][:s] + texts[el][e:]
    return dataclasses.replace(q, stem=texts[G.STEM], alternatives=[texts[G.element_name(i)]
                                                                    for i in range(len(q.alternatives))])


def _drops(model, q, cuts: list[set]):
    """p(ŷ) on the intact item minus p(ŷ) with each set of words deleted, by `inference.score`."""
    copies = [q] + [_without(q, c) for c in cuts]
    scored = inference.score(model, copies, None, ["shortcut"], item_ids=[str(i) for i in range(len(copies))],
                             evidence=None)
    probs = [r.formats["shortcut"].probabilities for r in scored]
    pred = max(range(len(probs[0])), key=probs[0].__getitem__)
    return pred, [probs[0][pred] - p[pred] for p in probs[1:]]


def _key(u):
    return (u.element, u.start, u.end)


def test_every_word_is_tried_alone_or_in_a_screened_group(explained):
    _, questions, explanations = explained
    assert len(explanations) == len(questions)
    # both ways of trying a function word occur on these items: in a group that took too little,
    # and alone (its group took enough)
    assert any(ex.screened for ex in explanations)
    assert any(a.word.lower() in G.FUNCTION_WORDS for ex in explanations for a in ex.words)
    for q, ex in zip(questions, explanations):
        assert ex.variant == G.variant() == "delete+screened+together3" and ex.scope == G.SCREENED
        every = {(el, s, e) for el, t in _elements(q) for s, e in G.words(t)}
        alone = {(a.element, a.start, a.end) for a in ex.words}
        grouped = [_key(u) for g in ex.screened for u in g.words]
        assert alone.isdisjoint(grouped) and len(grouped) == len(set(grouped))
        assert alone | set(grouped) == every, q.id
        assert all(u.text.lower() in G.FUNCTION_WORDS for g in ex.screened for u in g.words)
        assert {a.word.lower() for a in ex.words} >= {u.text.lower() for u in G.units(q, scope=G.CONTENT)}
        ranking = [_key(u) for u in ex.ranking()]
        assert sorted(ranking) == sorted(every)  # every word once, the together set first
        if ex.together is not None:
            assert ranking[:len(ex.together.words)] == [_key(u) for u in ex.together.words]
        assert G.Explanation.from_json(json.loads(json.dumps(ex.to_json()))).to_json() == ex.to_json()


def test_every_number_kept_is_the_rescored_drop(explained):
    model, questions, explanations = explained
    for q, ex in zip(questions, explanations):
        cuts = [{(a.element, a.start, a.end)} for a in ex.words] + [{_key(u) for u in g.words} for g in ex.screened]
        kept = [a.effect for a in ex.words] + [g.effect for g in ex.screened]
        if ex.together is not None:
            cuts.append({_key(u) for u in ex.together.words})
            kept.append(ex.together.effect)
        pred, drops = _drops(model, q, cuts)
        assert pred == ex.predicted
        assert kept == pytest.approx(drops, abs=2e-6), q.id


def test_screened_groups_take_too_little_and_the_together_set_is_the_best_candidate(explained):
    model, questions, explanations = explained
    searched = 0
    for q, ex in zip(questions, explanations):
        single = sorted(ex.words, key=lambda a: (-a.effect, G.element_order(a.element), a.start))
        third = single[G.SCREEN_RANK - 1].effect if len(single) >= G.SCREEN_RANK else float("-inf")
        for g in ex.screened:  # taken out alone they could not be among the strongest words
            assert g.effect < max(G.SCREEN_MIN, third), (q.id, g)
        if len(single) < G.DEFAULT_TOGETHER:
            assert ex.together is None
            continue
        top = single[:G.DEFAULT_TOGETHER + 1]
        sets = [top] if len(top) == G.DEFAULT_TOGETHER else [
            [top[0], *rest] for rest in itertools.combinations(top[1:], G.DEFAULT_TOGETHER - 1)]
        _, drops = _drops(model, q, [{(a.element, a.start, a.end) for a in s} for s in sets])
        best = max(range(len(sets)), key=drops.__getitem__)
        assert {_key(u) for u in ex.together.words} == {(a.element, a.start, a.end) for a in sets[best]}, q.id
        assert ex.together.effect == pytest.approx(drops[best], abs=2e-6)
        # the ranking's top three take at least what the three strongest words take together
        assert ex.together.effect >= drops[0] - 2e-6
        chosen = {_key(u) for u in ex.together.words}  # strongest alone first
        assert [_key(u) for u in ex.together.words] == [(a.element, a.start, a.end) for a in single
                                                        if (a.element, a.start, a.end) in chosen]
        searched += 1
    assert searched >= len(questions) // 2


def test_the_old_variants_stay_apart_and_read_back():
    q = next(q for d in formats.read(str(GREEN)) for q in d.questions() if q.id == "0_1")
    model = inference.load_model(MODELS["per-alternative"], device="cpu")
    old = G.explain(model, [q], scope=G.ALL, together=0)[0]
    assert old.variant == "delete" and old.together is None and not old.screened
    data = old.to_json()
    assert data["version"] == 2
    # an explanation stored before issue 28 (version 1: no screened words, no together set)
    v1 = {k: v for k, v in data.items() if k not in ("screened", "together", "together_size")} | {"version": 1}
    back = G.Explanation.from_json(v1)
    assert back.variant == "delete" and back.together is None and back.ranking() == old.ranking()
    assert not G.current(back, q, model.id, G.variant())  # the default's explanation is another one


def test_the_report_prefers_the_default_variant():
    from desktop.reports import giveaway_page

    assert giveaway_page.VARIANT == G.variant()
