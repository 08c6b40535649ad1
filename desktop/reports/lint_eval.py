"""Precision and recall of the surface linter against recorded problem tags.

A unit is one element of one item: the passage (counted once per passage, not per
question), the stem, or the alternatives of a question.  A detection of type t in a
unit is right when the recorded tags of that unit include t or its EMBRACE tool label
counterpart ("extra spaces" / "extra spaces (punctuation)" are one family: the tool
records both for one problem).  In EMBRACE's green items nothing is recorded, so every
detection there counts against precision.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from desktop.domain import surface_lint
from desktop.domain.model import Dataset

FAMILY = {
    "extra_spaces": "extra spaces", "extra_spaces_punctuation": "extra spaces",
    "missing_spaces": "missing spaces", "missing_spaces_punctuation": "missing spaces",
}
GROUP = {"text": "text", "question": "question", "alternatives": "alternatives",
         "between-alternatives": "alternatives"}


def family(t: str) -> str:
    return FAMILY.get(t, t)


@dataclass
class TypeScore:
    type: str
    detected_units: int = 0
    correct_units: int = 0
    recorded_units: int = 0
    found_units: int = 0
    green_units: int = 0  # detections in units with nothing recorded at all

    @property
    def precision(self) -> float | None:
        return self.correct_units / self.detected_units if self.detected_units else None

    @property
    def recall(self) -> float | None:
        return self.found_units / self.recorded_units if self.recorded_units else None


def units(datasets: list[Dataset]):
    """(unit id, recorded families, detected families with their types) for every unit."""
    for ds in datasets:
        for p in ds.passages:
            text_tags = surface_lint.detect_text(p.text)
            recorded_text: set[str] = set()
            for q in p.questions:
                recorded = defaultdict(set)
                for t in q.problems:
                    if t.origin != "model" and t.type != "note" and t.element in GROUP:
                        recorded[GROUP[t.element]].add(family(t.type))
                recorded_text |= recorded["text"]
                detected = defaultdict(set)
                for t in surface_lint.detect_item(q, p.text):
                    detected[GROUP[t.element]].add(t.type)
                for g in ("question", "alternatives"):
                    yield f"{q.id}/{g}", recorded[g], detected[g]
            yield f"{p.id}/text", recorded_text, {t.type for t in text_tags}


def evaluate(datasets: list[Dataset]) -> dict[str, TypeScore]:
    scores: dict[str, TypeScore] = {}

    def score(t: str) -> TypeScore:
        return scores.setdefault(t, TypeScore(t))

    for _, recorded, detected in units(datasets):
        for t in detected:
            s = score(t)
            s.detected_units += 1
            s.correct_units += family(t) in recorded
            s.green_units += not recorded
        for fam in recorded:
            s = score(fam)
            s.recorded_units += 1
            s.found_units += any(family(t) == fam for t in detected)
    return dict(sorted(scores.items()))


def table(datasets: list[Dataset]):
    """The scores as a pandas DataFrame (one row per type or family)."""
    import pandas as pd
    rows = [{"type": s.type, "detected units": s.detected_units, "correct": s.correct_units,
             "precision": s.precision, "recorded units": s.recorded_units, "found": s.found_units,
             "recall": s.recall, "detections where nothing is recorded": s.green_units}
            for s in evaluate(datasets).values()]
    return pd.DataFrame(rows)
