"""One row per question: difficulty points, total, eligibility and acceptability.

Pure function over `list[Dataset]` (from the store or straight from files), so the
report and its tests need no database.  pandas is imported inside `items_frame`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from desktop.domain import difficulty as D
from desktop.domain import surface_lint as L
from desktop.domain import typology as T
from desktop.domain.model import Assessment, Dataset, ProblemTag, Question

COLUMNS = ["item_id", "passage_id", "source", "file", "file_colour", *D.VARIABLES, "total", "eligible",
           "eligibility_note", "acceptability", "text_acceptability", "question_acceptability",
           "alternatives_acceptability", "mcq_unit_acceptability", "acceptability_with_suggestions",
           "toi_category", "tom_category", "pod_category", "text_format", "multiple_texts", "unit_type",
           "assessed_by", "recorded_problems", "suggested_problems"]

# EMBRACE splits its release by the worst tier and names the files by colour
COLOUR_ACCEPTABILITY = {"green": T.ACCEPTABLE, "yellow": T.MAINLY, "orange": T.PARTIALLY, "red": T.UNACCEPTABLE}


def file_colour(file: str | None) -> str | None:
    m = re.search(r"(green|yellow|orange|red)", str(file or "").rsplit("/", 1)[-1].lower())
    return m.group(1) if m else None


def pick_assessment(q: Question) -> Assessment | None:
    """The assessment the report shows: the last one by a person, else the imported one."""
    human = [a for a in q.assessments if a.annotator != "imported"]
    return (human or q.assessments or [None])[-1]


@dataclass
class ItemRow:
    question: Question
    passage_text: str
    values: dict[str, Any]
    row: dict[str, Any]
    recorded: list[ProblemTag] = field(default_factory=list)
    suggested: list[ProblemTag] = field(default_factory=list)


def _tag_list(tags: list[ProblemTag]) -> str:
    seen = []
    for t in tags:
        if t.type == T.NOTE:
            continue
        s = f"{t.element}:{t.type}"
        if s not in seen:
            seen.append(s)
    return "; ".join(seen)


def item_rows(datasets: list[Dataset], suggestions: bool = True) -> list[ItemRow]:
    out: list[ItemRow] = []
    for ds in datasets:
        file = str(ds.extra.get("file") or "")
        colour = file_colour(file)
        for p in ds.passages:
            # a text problem affects every question of its passage, wherever it was recorded
            text_tags = [t for q in p.questions for t in q.problems if t.element == T.TEXT and t.origin != "model"]
            seen, unique_text = set(), []
            for t in text_tags:
                k = (t.type, t.note, t.start, t.end)
                if k not in seen:
                    seen.add(k)
                    unique_text.append(t)
            text_suggestions = L.detect_text(p.text) if suggestions else []
            for q in p.questions:
                recorded = unique_text + [t for t in q.problems if t.element != T.TEXT and t.origin != "model"]
                suggested = text_suggestions + (L.detect_item(q, p.text) if suggestions else [])
                out.append(_row(q, p.text, file, colour, recorded, suggested))
    return out


def _row(q: Question, text: str, file: str, colour: str | None, recorded, suggested) -> ItemRow:
    a = pick_assessment(q)
    values = dict(a.values) if a else {}
    pts = {}
    for var in D.VARIABLES:
        v = values.get(var)
        if v is None and var == "toc" and values:
            v = "none"
        try:
            pts[var] = D.points(var, v) if v is not None else None
        except ValueError:
            pts[var] = None
    total = D.total(values) if values else None
    worst = T.item_worst_tier(recorded)
    if a is None or total is None:
        eligible, note = False, "not assessed" if a is None else "incomplete: " + ", ".join(D.missing(values))
    else:
        eligible, note = D.eligibility(a.text_format, a.unit_type, worst)
    both = recorded + suggested
    row = {
        "item_id": q.id, "passage_id": q.passage_id, "source": q.source, "file": file.rsplit("/", 1)[-1],
        "file_colour": colour, **pts, "total": total, "eligible": eligible, "eligibility_note": note,
        "acceptability": T.acceptability(recorded),
        "text_acceptability": T.acceptability(recorded, "text"),
        "question_acceptability": T.acceptability(recorded, "question"),
        "alternatives_acceptability": T.acceptability(recorded, "alternatives"),
        "mcq_unit_acceptability": T.mcq_unit_acceptability(recorded),
        "acceptability_with_suggestions": T.acceptability(both, include_suggestions=True),
        "toi_category": values.get("toi"),
        "tom_category": D.tom_key(values["tom"]) if values.get("tom") is not None else None,
        "pod_category": values.get("pod"),
        "text_format": a.text_format if a else None,
        "multiple_texts": a.multiple_texts if a else None,
        "unit_type": a.unit_type if a else None,
        "assessed_by": a.annotator if a else None,
        "recorded_problems": _tag_list(recorded),
        "suggested_problems": _tag_list(suggested),
    }
    return ItemRow(q, text, values, row, recorded, suggested)


def items_frame(rows: list[ItemRow]):
    import pandas as pd
    return pd.DataFrame([r.row for r in rows], columns=COLUMNS)


def colour_exceptions(rows: list[ItemRow]) -> list[dict]:
    """Items whose acceptability differs from their file's colour, and the tags that decide it."""
    out = []
    for r in rows:
        colour = r.row["file_colour"]
        if colour is None:
            continue
        want = COLOUR_ACCEPTABILITY[colour]
        for basis, tags, got in (("recorded tags", r.recorded, r.row["acceptability"]),
                                 ("with suggestions", r.recorded + r.suggested,
                                  r.row["acceptability_with_suggestions"])):
            if got == want:
                continue
            worse = T.ACCEPTABILITY.index(got) > T.ACCEPTABILITY.index(want)
            if worse:
                why = [f"{t.element}:{t.type}" + (f" {t.note}" if t.origin == "model" else "")
                       for t in tags if T.tier(t.type) and
                       T.ACCEPTABILITY.index(T.acceptability_of_tier(T.tier(t.type))) > T.ACCEPTABILITY.index(want)
                       and (basis == "with suggestions" or t.origin != "model")]
            else:
                why = [f"no recorded tag of the {want} tier's kind"]
            out.append({"item_id": r.row["item_id"], "file_colour": colour, "basis": basis, "expected": want,
                        "got": got, "why": "; ".join(dict.fromkeys(why))})
    return out
