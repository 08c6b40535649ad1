"""κ and α against published worked examples and a reference implementation (sklearn)."""
from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from desktop.domain import agreement as ag

N = None
# Krippendorff, K. (2011). "Computing Krippendorff's Alpha-Reliability", Annenberg School
# for Communication, section C (nominal data, any number of observers, missing data):
# 4 observers (rows) × 12 units (columns), "." for a missing value.  Published results:
# α nominal = 0.743, ordinal = 0.815, interval = 0.849, ratio = 0.797.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]

# Fleiss, J. L. (1971) as worked on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14
# raters each, 5 categories; P̄ = 0.378, P̄e = 0.213, κ = 0.210.
FLEISS_WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


@pytest.mark.parametrize("level, published", [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797),
])
def test_krippendorff_2011_worked_example(level, published):
    alpha = ag.krippendorff_alpha(ag.by_coder(KRIPPENDORFF_2011), level)
    assert round(alpha, 3) == published


def _alpha_by_pairs(units, delta):
    """Independent textbook form: α = 1 − (n−1) Σ_u Σ_{i≠j} δ/(m_u−1) / Σ_{all pairable i≠j} δ."""
    pairable = [[v for v in u if v is not None] for u in units]
    pairable = [u for u in pairable if len(u) >= 2]
    pooled = [v for u in pairable for v in u]
    n = len(pooled)
    within = sum(delta(a, b) / (len(u) - 1) for u in pairable for a, b in permutations(u, 2))
    between = sum(delta(a, b) for a, b in permutations(pooled, 2))
    return 1 - (n - 1) * within / between


def test_alpha_matches_the_pairwise_definition_on_the_worked_example():
    units = ag.by_coder(KRIPPENDORFF_2011)
    assert ag.krippendorff_alpha(units, "nominal") == pytest.approx(_alpha_by_pairs(units, lambda a, b: a != b))
    assert ag.krippendorff_alpha(units, "interval") == pytest.approx(
        _alpha_by_pairs(units, lambda a, b: (a - b) ** 2))


def test_fleiss_1971_worked_example():
    assert round(ag.fleiss_kappa_counts(FLEISS_WIKIPEDIA), 3) == 0.210
    # the same table given as each subject's 14 ratings
    units = [[cat for cat, count in enumerate(row, 1) for _ in range(count)] for row in FLEISS_WIKIPEDIA]
    assert ag.fleiss_kappa(units) == pytest.approx(ag.fleiss_kappa_counts(FLEISS_WIKIPEDIA))


def test_cohen_textbook_two_by_two():
    # Wikipedia "Cohen's kappa", worked example: 50 grant proposals, both Yes 20, A Yes/B No 5,
    # A No/B Yes 10, both No 15; p_o = 0.70, p_e = 0.50, κ = 0.40.
    a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert ag.cohen_kappa(a, b) == pytest.approx(0.40)
    assert ag.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40))
def test_cohen_agrees_with_sklearn(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = ag.cohen_kappa(a, b)
    if ours is None:  # chance agreement already perfect: κ undefined (sklearn divides by zero)
        assert len(set(a) | set(b)) == 1
    else:
        assert ours == pytest.approx(cohen_kappa_score(a, b))


def test_cohen_drops_units_a_rater_left_empty():
    assert ag.cohen_kappa(["x", "y", None, "x"], ["x", "y", "y", None]) == 1.0


def test_undefined_coefficients_are_none():
    assert ag.krippendorff_alpha([[1, 1], [1, 1]]) is None  # no variation at all
    assert ag.krippendorff_alpha([[1], [2]]) is None  # nothing pairable
    assert ag.fleiss_kappa([[1], [2, None]]) is None
    assert ag.kappa([["a", "a"], ["b", "b"]], raters=2) == ("cohen", 1.0)
    assert ag.kappa([["a", "a", "a"], ["b", "b", "b"]], raters=3) == ("fleiss", 1.0)


def test_span_agreement_is_the_expmrc_cross_validation():
    # two annotators: token F1 is symmetric, so the mean of both held-out scores is their F1
    texts = {"ann": "cats like warm milk", "bob": "dogs like milk"}
    assert ag.span_agreement(texts) == pytest.approx(100 * 4 / 7)
    # three annotators: each held out against the other two, max over references
    texts["cy"] = "cats like warm milk"
    assert ag.span_agreement(texts) == pytest.approx(100 * (1 + 4 / 7 + 1) / 3)
    assert ag.span_agreement({"ann": "x"}) is None


def test_set_and_pairwise_agreement():
    assert ag.set_agreement([frozenset({"a", "b"}), frozenset({"b"})]) == 0.5
    assert ag.set_agreement([frozenset(), frozenset()]) == 1.0
    assert ag.pairwise_proportion(["x", "x", "y"]) == pytest.approx(1 / 3)


def test_fleiss_leaves_incomplete_units_out():
    """Fleiss' κ needs every unit rated by all raters: a unit with a missing rating is dropped
    (listwise, as R's irr::kappam.fleiss), so adding incomplete units changes nothing."""
    units = [[cat for cat, count in enumerate(row, 1) for _ in range(count)] for row in FLEISS_WIKIPEDIA]
    with_gaps = units + [[1, None] + [2] * 12, [None] * 14, [3, 3]]
    assert ag.fleiss_kappa(with_gaps) == pytest.approx(0.210, abs=5e-4)
    assert ag.fleiss_kappa(with_gaps) == pytest.approx(ag.fleiss_kappa(units))
    assert ag.complete_units(with_gaps) == [list(u) for u in units]
    assert ag.kappa(with_gaps, raters=14) == ("fleiss", ag.fleiss_kappa(units))
    # the counts form: a row with fewer ratings than the fullest one is incomplete
    assert ag.fleiss_kappa_counts(FLEISS_WIKIPEDIA + [[0, 0, 0, 0, 13]]) == pytest.approx(
        ag.fleiss_kappa_counts(FLEISS_WIKIPEDIA))
