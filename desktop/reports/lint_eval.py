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


def units(datasets: list[Dataset], rows=None):
    """(unit id, recorded families, detected families) for every unit.

    `rows`: the report's item rows (recorded and suggested tags already computed)."""
    if rows is None:
        from .corpus_items import item_rows
        rows = item_rows(datasets)
    by_passage: dict[str, list] = defaultdict(list)
    for r in rows:
        by_passage[(r.row["file"], r.question.passage_id)].append(r)
        recorded, detected = defaultdict(set), defaultdict(set)
        for t in r.recorded:
            if t.type != "note" and t.element in GROUP:
                recorded[GROUP[t.element]].add(family(t.type))
        for t in r.suggested:
            if t.element in GROUP:
                detected[GROUP[t.element]].add(family(t.type))
        for g in ("question", "alternatives"):
            yield f"{r.question.id}/{g}", recorded[g], detected[g]
    for (_, pid), rs in by_passage.items():
        recorded = {family(t.type) for r in rs for t in r.recorded if t.element == "text" and t.type != "note"}
        detected = {family(t.type) for t in rs[0].suggested if t.element == "text"}
        yield f"{pid}/text", recorded, detected


def evaluate(datasets: list[Dataset], rows=None) -> dict[str, TypeScore]:
    scores: dict[str, TypeScore] = {}

    def score(t: str) -> TypeScore:
        return scores.setdefault(t, TypeScore(t))

    for _, recorded, detected in units(datasets, rows):
        for fam in detected:
            s = score(fam)
            s.detected_units += 1
            s.correct_units += fam in recorded
            s.green_units += not recorded
        for fam in recorded:
            s = score(fam)
            s.recorded_units += 1
            s.found_units += fam in detected
    return dict(sorted(scores.items()))


def table(datasets: list[Dataset], rows=None):
    """The scores as a pandas DataFrame (one row per type or family)."""
    import pandas as pd
    rows = [{"type (family)": s.type, "detected units": s.detected_units, "correct": s.correct_units,
             "precision": s.precision, "recorded units": s.recorded_units, "found": s.found_units,
             "recall": s.recall, "detections where nothing is recorded": s.green_units}
            for s in evaluate(datasets, rows).values()]
    return pd.DataFrame(rows)
