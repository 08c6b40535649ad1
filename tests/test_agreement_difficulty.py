"""Kirsch–Mosenthal, tag and acceptability agreement on the EMBRACE green and yellow files.

EMBRACE releases one (consensus) layer; a second reviewer is made here from it by
moving every fifth item's POD one category up and dropping every third item's tags,
so the expected coefficients are computed independently in the test (sklearn's Cohen's
κ, Fleiss' κ from its counts, α from its pairwise definition).
"""
import copy
from itertools import permutations
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from desktop.domain import difficulty, typology
from desktop.formats import read
from desktop.reports.agreement_measures import compute

EMBRACE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "embrace"
FILES = [EMBRACE / "embrace_green.jsonl", EMBRACE / "embrace_yellow.jsonl"]  # 200 + 965 items


def _second_reviewer(q, i, name="reviewer-2", shift_every=5, drop_every=3):
    a = copy.deepcopy(q.assessments[0])
    a.annotator = name
    if i % shift_every == 0 and a.values.get("pod") is not None:
        cats = difficulty.categories("pod")
        a.values["pod"] = cats[(cats.index(a.values["pod"]) + 1) % len(cats)]
    q.assessments.append(a)
    if i % drop_every != 0:
        for t in list(q.problems):
            if t.annotator == "imported":
                t2 = copy.deepcopy(t)
                t2.annotator = name
                q.problems.append(t2)


@pytest.fixture(scope="module")
def embrace():
    pairs = [(q, p.text) for f in FILES for ds in read(f) for p in ds.passages for q in p.questions]
    assert len(pairs) == 1165 and all(len(q.assessments) == 1 for q, _ in pairs)
    for i, (q, _) in enumerate(pairs):
        _second_reviewer(q, i)
    return pairs


@pytest.fixture(scope="module")
def report(embrace):
    return compute(embrace)


def test_pod_kappa_is_cohens_and_matches_sklearn(embrace, report):
    first = [q.assessments[0].values["pod"] for q, _ in embrace]
    second = [q.assessments[1].values["pod"] for q, _ in embrace]
    pod = report["overall"]["difficulty"]["pod"]
    assert pod["kappa_method"] == "cohen" and pod["annotators"] == ["imported", "reviewer-2"]
    assert pod["units"] == 1165
    assert pod["kappa"] == pytest.approx(cohen_kappa_score(first, second))
    assert pod["kappa"] < 1.0
    # variables nobody changed agree perfectly
    assert report["overall"]["difficulty"]["ni"]["kappa"] == pytest.approx(1.0)


def test_total_alpha_interval_matches_the_pairwise_definition(embrace, report):
    units = [[difficulty.total(a.values) for a in q.assessments] for q, _ in embrace]
    units = [u for u in units if None not in u]
    pooled = [v for u in units for v in u]
    within = sum((a - b) ** 2 for u in units for a, b in permutations(u, 2))
    between = sum((a - b) ** 2 for a, b in permutations(pooled, 2))
    expected = 1 - (len(pooled) - 1) * within / between
    total = report["overall"]["difficulty_total"]
    assert total["items"] == 1165
    assert total["alpha_interval"] == pytest.approx(expected)
    assert 0 < total["alpha_ordinal"] < 1


def test_tags_and_acceptability(embrace, report):
    types = sorted({t.type for q, _ in embrace for t in q.problems})
    first, second = [], []
    for q, _ in embrace:
        for t in types:
            first.append(any(p.type == t and p.annotator == "imported" for p in q.problems))
            second.append(any(p.type == t and p.annotator == "reviewer-2" for p in q.problems))
    tags = report["overall"]["tags"]
    assert tags["types"] == types and tags["items"] == 1165
    assert tags["kappa"] == pytest.approx(cohen_kappa_score(first, second))
    acc1 = [typology.acceptability([p for p in q.problems if p.annotator == "imported"]) for q, _ in embrace]
    acc2 = [typology.acceptability([p for p in q.problems if p.annotator == "reviewer-2"]) for q, _ in embrace]
    assert len(set(acc1)) == 2  # green items are acceptable, yellow ones mainly acceptable
    assert report["overall"]["acceptability"]["kappa"] == pytest.approx(cohen_kappa_score(acc1, acc2))


def test_three_reviewers_use_fleiss(embrace):
    pairs = copy.deepcopy(embrace)
    for i, (q, _) in enumerate(pairs):
        a = copy.deepcopy(q.assessments[0])
        a.annotator = "reviewer-3"
        if i % 7 == 0:
            cats = difficulty.categories("pod")
            a.values["pod"] = cats[(cats.index(a.values["pod"]) + 2) % len(cats)]
        q.assessments.append(a)
    pod = compute(pairs)["overall"]["difficulty"]["pod"]
    assert pod["kappa_method"] == "fleiss" and len(pod["annotators"]) == 3
    # Fleiss (1971) by hand: P_i from each item's category counts, P_e from the marginals
    cats = sorted({a.values["pod"] for q, _ in pairs for a in q.assessments})
    counts = [[sum(a.values["pod"] == c for a in q.assessments) for c in cats] for q, _ in pairs]
    p_i = [sum(n * (n - 1) for n in row) / (3 * 2) for row in counts]
    p_j = [sum(row[j] for row in counts) / (3 * len(counts)) for j in range(len(cats))]
    p_bar, p_e = sum(p_i) / len(p_i), sum(p * p for p in p_j)
    assert pod["kappa"] == pytest.approx((p_bar - p_e) / (1 - p_e))


def test_lowest_agreement_first(report):
    values = [r["agreement"] for r in report["items"]]
    assert values == sorted(values) and len(values) == 1165
    # an item with a shifted POD agrees less on difficulty than one left alone
    worst = report["items"][0]
    assert worst["difficulty_agreement"] < 100 or worst.get("tag_agreement", 100) < 100


def test_fleiss_uses_only_the_items_every_reviewer_assessed(embrace):
    """A third reviewer assesses every other item: κ is Fleiss' over those items alone
    (computed by hand here), and the report says how many items κ left out."""
    pairs = copy.deepcopy(embrace)
    for i, (q, _) in enumerate(pairs):
        if i % 2 == 0:
            a = copy.deepcopy(q.assessments[0])
            a.annotator = "reviewer-3"
            if i % 7 == 0:
                cats = difficulty.categories("pod")
                a.values["pod"] = cats[(cats.index(a.values["pod"]) + 2) % len(cats)]
            q.assessments.append(a)
    pod = compute(pairs)["overall"]["difficulty"]["pod"]
    assert pod["kappa_method"] == "fleiss"
    full = [q for q, _ in pairs if len(q.assessments) == 3]
    assert pod["kappa_units"] == len(full) == 583 and pod["kappa_incomplete_dropped"] == 1165 - 583
    cats = sorted({a.values["pod"] for q in full for a in q.assessments})
    counts = [[sum(a.values["pod"] == c for a in q.assessments) for c in cats] for q in full]
    p_i = [sum(n * (n - 1) for n in row) / (3 * 2) for row in counts]
    p_j = [sum(row[j] for row in counts) / (3 * len(counts)) for j in range(len(cats))]
    p_bar, p_e = sum(p_i) / len(p_i), sum(p * p for p in p_j)
    assert pod["kappa"] == pytest.approx((p_bar - p_e) / (1 - p_e))
