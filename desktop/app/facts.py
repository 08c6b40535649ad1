"""The navigator's facts of an item: acceptability, eligibility, difficulty total and what the
model says (shortcut N, MI, the review flags) — plain functions the window runs in a worker
thread (the facts of a whole database) and on the GUI thread (one item after an edit)."""
from __future__ import annotations

from typing import Any

from desktop.app.model_scoring import model_facts
from desktop.domain import difficulty as km
from desktop.domain import resolve
from desktop.domain import typology as ty
from desktop.domain.model import Dataset, Question


def compute_facts(datasets: list[Dataset], annotator: str) -> dict[str, dict[str, Any]]:
    """Per item: acceptability, eligibility, difficulty total and model flags (navigator filters)."""
    return {q.id: question_facts(q, annotator) for ds in datasets for q in ds.questions()}


def question_facts(q: Question, annotator: str) -> dict[str, Any]:
    """One item's navigator facts: acceptability, eligibility, difficulty total, N, MI, model flags."""
    shown = resolve.assessment(q.assessments, annotator)
    total = shown.total
    eligible, why = km.eligibility(shown.text_format, shown.unit_type, ty.item_worst_tier(q.problems))
    out = {"acceptability": ty.acceptability(q.problems), "eligible": eligible, "why": why,
           "total": total, "model_flags": model_flags(q)}
    out.update(model_numbers(q))
    return out


def unannotated_facts() -> dict[str, Any]:
    """The facts of an item without assessments, problems or predictions (most of an imported bank)."""
    return question_facts(Question(id="", passage_id="", index=0, stem="", alternatives=["", ""], key=None), "")


def model_flags(q: Question) -> list[str]:
    """Short labels of what the models say: right or wrong per input format."""
    flags = []
    if q.key is None:
        return flags
    for p in q.predictions:
        if not p.probabilities:
            continue
        best = max(range(len(p.probabilities)), key=p.probabilities.__getitem__)
        flags.append(f"{p.input_format}: {'right' if best == q.key else 'wrong'}")
    flags.extend(model_numbers(q)["review_flags"])
    return sorted(set(flags))


def model_numbers(q: Question) -> dict[str, Any]:
    """Shortcut N, MI and the model panel's flags, for the navigator's filters and order."""
    return model_facts(q)
