"""Agreement between the annotators' layers of a set of items, per item and overall.

Who counts on an item: every annotator who left that kind of work on it, "imported"
included (it is the original annotators' layer: EMBRACE's reviewers, or ExpMRC's
references as `expmrc-ref-N`), `gold` excluded (an adjudicated layer is not an
independent rater, and counting it would inflate agreement).

* evidence: annotators with at least one evidence span on the item (or an ExpMRC
  reference that could not be located, which keeps its text);
* bases: annotators with at least one basis span on the item; each alternative is
  compared, an alternative one of them left without a basis counting as empty;
* difficulty: annotators with an assessment (a variable counts where the annotator
  gave it a value);
* problem tags and acceptability: annotators who assessed the item or tagged a
  problem on it (an assessor without tags says "no problems").

Model suggestions nobody accepted (origin "model") are not anyone's judgement and are
left out everywhere.

All scores are 0..1 coefficients except `evidence_f1` / `basis_f1` and the per-item
proportions, which are percentages like the ExpMRC seed's.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable

from desktop.domain import agreement as ag
from desktop.domain import difficulty, typology
from desktop.domain.model import BASIS, EVIDENCE, MODEL, Question

GOLD = ag.GOLD


def _rater(obj) -> bool:
    """A judgement of a rater: not gold's, and not a model suggestion nobody accepted."""
    return obj.annotator != GOLD and obj.origin != MODEL


def _span_text(span, passage_text: str) -> str:
    # An imported ExpMRC reference keeps its verbatim text while its offsets are
    # unchanged: that text, not the located slice, is what the references say.
    ref = span.extra.get("reference")
    if ref is not None and list(span.extra.get("located", [])) == [span.start, span.end]:
        return ref
    return passage_text[span.start:span.end]


def annotator_texts(q: Question, passage_text: str, role: str, alternative: int | None = None
                    ) -> dict[str, str]:
    """Each annotator's span text for one role (one alternative's bases), spans joined in passage order."""
    groups: dict[str, list] = defaultdict(list)
    for s in q.spans:
        if (s.role == role and _rater(s) and (alternative is None or s.alternative == alternative)):
            groups[s.annotator].append(s)
    texts = {a: " ".join(_span_text(s, passage_text) for s in sorted(spans, key=lambda s: (s.start, s.end)))
             for a, spans in groups.items()}
    if role == EVIDENCE:
        for u in q.extra.get("unlocated_evidence", []):
            name = f"expmrc-ref-{u['ref_index'] + 1}"
            texts[name] = (texts[name] + " " + u["text"]) if name in texts else u["text"]
    return texts


def _basis_agreement(q: Question, passage_text: str) -> tuple[float | None, list[str]]:
    names = sorted({s.annotator for s in q.spans if s.role == BASIS and _rater(s)})
    if len(names) < 2:
        return None, names
    scores = []
    for alt in range(len(q.alternatives)):
        texts = annotator_texts(q, passage_text, BASIS, alt)
        scores.append(ag.span_agreement({a: texts.get(a, "") for a in names}))
    return ag.mean(scores), names


def _nominal(var: str, value: Any) -> Any:
    if value is None:
        return None
    if var == "tom":
        try:
            return difficulty.tom_key(value)
        except ValueError:
            return repr(value)
    return value if isinstance(value, (str, int, float, bool)) else repr(value)


def _points(var: str, value: Any) -> float | None:
    if value is None:
        return None
    try:
        return difficulty.points(var, value)
    except (ValueError, KeyError, TypeError):
        return None


def _total(values: dict) -> float | None:
    try:
        return difficulty.total(values)
    except (ValueError, KeyError, TypeError):
        return None


def _assessments(q: Question) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for a in q.assessments:
        if a.annotator != GOLD and a.values:
            out.setdefault(a.annotator, {}).update(a.values)
    return out


def _reviewers(q: Question) -> list[str]:
    names = {a for a in _assessments(q)} | {t.annotator for t in q.problems if _rater(t)}
    return sorted(names - {GOLD})


def _tag_sets(q: Question, names: list[str]) -> dict[str, frozenset]:
    sets: dict[str, set] = {a: set() for a in names}
    for t in q.problems:
        if t.annotator in sets and _rater(t):
            sets[t.annotator].add(t.type)
    return {a: frozenset(s) for a, s in sets.items()}


def _acceptability_of() -> Callable[[list], Any] | None:
    """The typology's acceptability class of one annotator's tags, if the typology offers it."""
    for name in ("acceptability", "acceptability_of", "classify"):
        fn = getattr(typology, name, None)
        if callable(fn):
            return fn
    return None


def _acceptability_rank() -> dict:
    classes = getattr(typology, "ACCEPTABILITY", None) or getattr(typology, "ACCEPTABILITY_CLASSES", None)
    return {c: i for i, c in enumerate(classes)} if isinstance(classes, (list, tuple)) else {}


def _coefficients(units: list[dict[str, Any]], ordinal_units: list[dict[str, Any]] | None = None) -> dict:
    """κ (Cohen for two raters, Fleiss for more) on nominal values, α ordinal on points/ranks."""
    raters = sorted({a for u in units for a in u})
    rows = [[u.get(a) for a in raters] for u in units]
    method, k = ag.kappa(rows, len(raters)) if len(raters) >= 2 else ("none", None)
    # κ is computed on complete units only (every annotator of the variable rated them);
    # α takes every unit with two or more values: say how many κ left out
    complete = len(ag.complete_units(rows)) if len(raters) >= 2 else 0
    out = {"kappa": k, "kappa_method": method, "annotators": raters,
           "units": sum(1 for u in units if sum(v is not None for v in u.values()) >= 2),
           "kappa_units": complete}
    out["kappa_incomplete_dropped"] = out["units"] - complete if len(raters) >= 2 else 0
    if ordinal_units is not None:
        out["alpha_ordinal"] = ag.krippendorff_alpha([list(u.values()) for u in ordinal_units], ag.ORDINAL)
    return out


def compute(items: Iterable[tuple[Question, str]], f1: Callable | None = None) -> dict:
    """Agreement over (question, passage text) pairs: {"overall": {...}, "items": [...]}, lowest agreement first."""
    rows = []
    evidence, basis = [], []
    var_units: dict[str, list[dict]] = {v: [] for v in difficulty.VARIABLES}
    var_points: dict[str, list[dict]] = {v: [] for v in difficulty.VARIABLES}
    total_units: list[dict] = []
    tag_items: list[tuple[str, dict[str, frozenset]]] = []
    accept_units: list[dict] = []
    accept_ranks: list[dict] = []
    acceptability = _acceptability_of()
    rank = _acceptability_rank()
    all_tag_types: set[str] = set()

    for q, passage_text in items:
        row: dict[str, Any] = {"item": q.id, "source": q.source}
        texts = annotator_texts(q, passage_text, EVIDENCE)
        if len(texts) >= 2:
            row["evidence_f1"] = ag.span_agreement(texts, f1)
            row["evidence_annotators"] = sorted(texts)
            evidence.append(row["evidence_f1"])
        b, names = _basis_agreement(q, passage_text)
        if b is not None:
            row["basis_f1"], row["basis_annotators"] = b, names
            basis.append(b)

        assessed = _assessments(q)
        if len(assessed) >= 2:
            props = []
            for var in difficulty.VARIABLES:
                nominal = {a: _nominal(var, v.get(var)) for a, v in assessed.items()}
                var_units[var].append(nominal)
                var_points[var].append({a: _points(var, v.get(var)) for a, v in assessed.items()})
                props.append(ag.pairwise_proportion(list(nominal.values())))
            totals = {a: _total(v) for a, v in assessed.items()}
            total_units.append(totals)
            p = ag.mean(props)
            row["difficulty_agreement"] = None if p is None else 100.0 * p
            row["difficulty_totals"] = totals
            row["difficulty_annotators"] = sorted(assessed)

        reviewers = _reviewers(q)
        if len(reviewers) >= 2:
            sets = _tag_sets(q, reviewers)
            tag_items.append((q.id, sets))
            all_tag_types.update(*sets.values())
            row["tag_agreement"] = 100.0 * ag.set_agreement(list(sets.values()))
            row["tags"] = {a: sorted(s) for a, s in sets.items()}
            if acceptability is not None:
                mine = {a: [t for t in q.problems if t.annotator == a and _rater(t)] for a in reviewers}
                classes = {}
                for a, tags in mine.items():
                    try:
                        classes[a] = acceptability(tags)
                    except Exception:  # a typology that cannot classify these tags: leave it out
                        classes[a] = None
                accept_units.append(classes)
                accept_ranks.append({a: rank.get(c) for a, c in classes.items()})
                row["acceptability"] = classes
                p = ag.pairwise_proportion(list(classes.values()))
                row["acceptability_agreement"] = None if p is None else 100.0 * p

        measures = [row.get(k) for k in ("evidence_f1", "basis_f1", "difficulty_agreement",
                                         "tag_agreement", "acceptability_agreement")]
        row["agreement"] = ag.mean(measures)
        if row["agreement"] is not None:
            rows.append(row)

    # every (item, tag type) is one yes/no unit for each reviewer of the item
    tag_units = [{a: (t in s) for a, s in sets.items()} for _, sets in tag_items for t in sorted(all_tag_types)]
    overall = {
        "evidence_f1": {"value": ag.mean(evidence), "items": len(evidence)},
        "basis_f1": {"value": ag.mean(basis), "items": len(basis)},
        "difficulty": {var: _coefficients(var_units[var], var_points[var]) for var in difficulty.VARIABLES},
        "difficulty_total": {"alpha_ordinal": ag.krippendorff_alpha([list(u.values()) for u in total_units],
                                                                   ag.ORDINAL),
                             "alpha_interval": ag.krippendorff_alpha([list(u.values()) for u in total_units],
                                                                    ag.INTERVAL),
                             "items": len(total_units)},
        "tags": {**_coefficients(tag_units), "alpha_nominal": ag.krippendorff_alpha(
            [list(u.values()) for u in tag_units], ag.NOMINAL), "items": len(tag_items),
            "types": sorted(all_tag_types)},
        "acceptability": {**_coefficients(accept_units), "alpha_ordinal": ag.krippendorff_alpha(
            [list(u.values()) for u in accept_ranks], ag.ORDINAL) if rank else None,
            "items": len(accept_units)},
        "items": len(rows),
    }
    rows.sort(key=lambda r: (r["agreement"], r["item"]))
    return {"overall": overall, "items": rows}
