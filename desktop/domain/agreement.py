"""Agreement between annotators: Cohen's κ, Fleiss' κ, Krippendorff's α, span agreement.

Pure functions on plain values.  A missing rating is ``None`` (or simply absent from a
unit's list); every coefficient returns ``None`` when it is undefined (fewer than two
pairable ratings, or no variation at all, where chance agreement is already perfect).

Span agreement follows the ExpMRC seed's human performance ("cross-validation
approach"): each annotator's span text in turn is the prediction, the other annotators'
texts are the references, scored with the official evidence F1 (maximum over the
references); the per-item score is the mean over every choice of held-out annotator,
in percent, and the overall score is the mean over items.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

from desktop.domain import expmrc_metric

NOMINAL, ORDINAL, INTERVAL, RATIO = "nominal", "ordinal", "interval", "ratio"
LEVELS = (NOMINAL, ORDINAL, INTERVAL, RATIO)


def _present(values: Iterable[Any]) -> list[Any]:
    return [v for v in values if v is not None]


# --------------------------------------------------------------------------- κ


def cohen_kappa(first: Sequence[Hashable | None], second: Sequence[Hashable | None]) -> float | None:
    """Cohen's κ of two raters over the same units; units either rater left empty are dropped."""
    if len(first) != len(second):
        raise ValueError("both raters must rate the same units")
    pairs = [(a, b) for a, b in zip(first, second) if a is not None and b is not None]
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(left[c] * right[c] for c in left) / (n * n)
    if expected == 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa_counts(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' κ from a units × categories table of how many raters chose each category.

    Fleiss (1971) has every unit rated by the same number of raters; a unit with fewer
    ratings than the fullest unit is incomplete and is left out (listwise, as R's
    irr::kappam.fleiss and INCEpTION do): a κ over units of different sizes is not
    Fleiss' κ.  Krippendorff's α is the coefficient for incomplete data.
    """
    full = max((sum(r) for r in counts), default=0)
    rows = [list(r) for r in counts if sum(r) == full and full >= 2]
    if not rows:
        return None
    per_unit = []
    for r in rows:
        n = sum(r)
        per_unit.append(sum(c * (c - 1) for c in r) / (n * (n - 1)))
    p_bar = sum(per_unit) / len(per_unit)
    total = sum(sum(r) for r in rows)
    width = max(len(r) for r in rows)
    p_j = [sum(r[j] for r in rows if j < len(r)) / total for j in range(width)]
    p_e = sum(p * p for p in p_j)
    if p_e == 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def complete_units(units: Sequence[Sequence[Hashable | None]]) -> list[list[Hashable]]:
    """The units every rater rated: no ``None`` and as many ratings as the longest unit."""
    width = max((len(u) for u in units), default=0)
    return [list(u) for u in units if len(u) == width and all(v is not None for v in u)]


def fleiss_kappa(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Fleiss' κ from each unit's list of ratings in rater order (``None`` = not rated),
    over the complete units only (`complete_units`)."""
    present = complete_units(units)
    categories = sorted({v for u in present for v in u}, key=repr)
    index = {c: i for i, c in enumerate(categories)}
    table = []
    for u in present:
        row = [0] * len(categories)
        for v in u:
            row[index[v]] += 1
        table.append(row)
    return fleiss_kappa_counts(table)


def kappa(units: Sequence[Sequence[Hashable | None]], raters: int) -> tuple[str, float | None]:
    """The κ the agreement report uses: Cohen's for two raters, Fleiss' for more, both on
    the units every rater rated (Cohen's drops a unit either rater left empty).

    `units` are lists of ratings in rater order (``None`` where a rater gave none).
    """
    if raters == 2:
        return "cohen", cohen_kappa([u[0] for u in units], [u[1] for u in units])
    return "fleiss", fleiss_kappa(units)


# --------------------------------------------------------------------------- α


def _coincidences(units: Sequence[Sequence[Any]]) -> dict[tuple[Any, Any], float]:
    """Krippendorff's coincidence matrix o_ck: each unit's m ratings give m(m-1) ordered pairs of weight 1/(m-1)."""
    o: dict[tuple[Any, Any], float] = defaultdict(float)
    for unit in units:
        values = _present(unit)
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    o[(c, k)] += 1.0 / (m - 1)
    return o


def _distance(level: str, marginals: Mapping[Any, float]) -> Callable[[Any, Any], float]:
    """δ²(c, k) for the metric of `level` (Krippendorff 2011, section on difference functions)."""
    if level == NOMINAL:
        return lambda c, k: 0.0 if c == k else 1.0
    if level == INTERVAL:
        return lambda c, k: float(c - k) ** 2
    if level == RATIO:
        return lambda c, k: 0.0 if c == k else ((c - k) / (c + k)) ** 2
    if level == ORDINAL:
        ranks = sorted(marginals)
        position = {v: i for i, v in enumerate(ranks)}
        cumulative = [0.0]
        for v in ranks:
            cumulative.append(cumulative[-1] + marginals[v])

        def ordinal(c, k):
            lo, hi = sorted((position[c], position[k]))
            between = cumulative[hi + 1] - cumulative[lo]  # n_g for g from c to k inclusive
            return (between - (marginals[c] + marginals[k]) / 2.0) ** 2

        return ordinal
    raise ValueError(f"unknown level of measurement {level!r}; one of {', '.join(LEVELS)}")


def krippendorff_alpha(units: Sequence[Sequence[Any]], level: str = NOMINAL) -> float | None:
    """Krippendorff's α over units (each a list of the values coders gave; ``None`` = missing).

    α = 1 − D_o / D_e with D_o = Σ o_ck δ²_ck / n and D_e = Σ n_c n_k δ²_ck / (n(n−1)),
    computed from the coincidence matrix of pairable values; units with one value drop out.
    Ordinal, interval and ratio values must be numbers (ordinal: anything sortable).
    """
    o = _coincidences(units)
    if not o:
        return None
    marginals: dict[Any, float] = defaultdict(float)
    for (c, _), w in o.items():
        marginals[c] += w
    n = sum(marginals.values())
    delta = _distance(level, marginals)
    observed = sum(w * delta(c, k) for (c, k), w in o.items())
    values = list(marginals)
    expected = sum(marginals[c] * marginals[k] * delta(c, k) for c in values for k in values) / (n - 1)
    if expected == 0.0:
        return None
    return 1.0 - observed / expected


def by_coder(table: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Turn Krippendorff's coders × units reliability table into per-unit value lists."""
    return [list(col) for col in zip(*table)]


# --------------------------------------------------------------------- span agreement


def span_agreement(
    texts: Mapping[str, str], f1: Callable[[str, list[str]], float] | None = None
) -> float | None:
    """ExpMRC cross-validation on one item, in percent: mean over held-out annotators of
    the evidence F1 of their text against the others' texts; None with fewer than two."""
    score = f1 or expmrc_metric.evidence_f1
    names = sorted(texts)
    if len(names) < 2:
        return None
    held_out = [score(texts[a], [texts[b] for b in names if b != a]) for a in names]
    return 100.0 * sum(held_out) / len(held_out)


def mean(values: Iterable[float | None]) -> float | None:
    present = _present(values)
    return sum(present) / len(present) if present else None


def pairwise_proportion(values: Sequence[Hashable | None]) -> float | None:
    """Share of agreeing pairs among the ratings one unit received (1.0 = all equal)."""
    present = _present(values)
    pairs = list(combinations(present, 2))
    if not pairs:
        return None
    return sum(a == b for a, b in pairs) / len(pairs)


def set_agreement(sets: Sequence[frozenset]) -> float | None:
    """Mean pairwise Jaccard agreement of annotators' sets on one unit (two empty sets agree)."""
    pairs = list(combinations(sets, 2))
    if not pairs:
        return None
    total = 0.0
    for a, b in pairs:
        union = a | b
        total += 1.0 if not union else len(a & b) / len(union)
    return total / len(pairs)


# The adjudicated layer: the final version chosen from the annotators' ones.  It is not
# a rater, so agreement leaves it out.
GOLD = "gold"
