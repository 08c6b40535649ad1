"""Layers of annotators and their adjudication, as plain data (no store, no I/O).

A *layer* is what one annotator said about one field of one item: the evidence
spans, the bases of alternative k (`basis.<k>`), the required paragraphs, the
problem tags, one difficulty variable (`difficulty.<var>`), text format, unit
type, the free-text note, the comments, the answerability label.  Spans and tags
are sorted tuples so that two layers compare equal exactly when they say the same.

Adjudication writes the chosen version as the layer of the annotator `gold`;
`adjudication_changes` says which `Change`s do that (the store applies them, each
with its history row: see `desktop.store.adjudication`).
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from desktop.domain.agreement import GOLD
from desktop.domain.changes import Change
from desktop.domain.model import BASIS, EVIDENCE, REQUIRED, ProblemTag, Question

SCALAR_FIELDS = ("text_format", "multiple_texts", "unit_type")
# Kept per annotator by the store but not said per annotator by a loaded Question:
# the caller passes them in ({annotator: value}).
PER_ANNOTATOR_FIELDS = ("note", "comments", "answerability")


def span_field(role: str, alternative: int | None) -> str:
    return f"{BASIS}.{alternative}" if role == BASIS else role


def is_span_field(fld: str) -> bool:
    return fld in (EVIDENCE, REQUIRED) or fld.startswith(f"{BASIS}.")


def empty_value(fld: str) -> Any:
    """What "said nothing" is for a field: no spans, no tags, no comments, else None."""
    return () if is_span_field(fld) or fld in ("problems", "comments") else None


def span_value(s) -> tuple:
    return (s.start, s.end)


def tag_value(t: ProblemTag) -> tuple:
    return (t.type, t.element, t.alternative, t.start, t.end, t.note or "")


def plain(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=list))


def layers(q: Question, notes: Mapping[str, str] | None = None,
           comments: Mapping[str, list[str]] | None = None,
           answerability: Mapping[str, str | None] | None = None) -> dict[tuple[str, str], Any]:
    """{(annotator, field): value} for every layer of a question; spans and tags as sorted tuples.

    `notes`, `comments` and `answerability` are {annotator: value} as the store keeps
    them per annotator (a loaded question merges them, so they come from the caller);
    left out, those fields are no layers.  Empty values are no layers either.
    """
    out: dict[tuple[str, str], Any] = {}
    spans: dict[tuple[str, str], list] = {}
    for s in q.spans:
        spans.setdefault((s.annotator, span_field(s.role, s.alternative)), []).append(s)
    for key, group in spans.items():
        out[key] = tuple(sorted({span_value(s) for s in group}))
    tags: dict[str, set] = {}
    for t in q.problems:
        tags.setdefault(t.annotator, set()).add(tag_value(t))
    for a, group in tags.items():
        out[(a, "problems")] = tuple(sorted(group, key=repr))
    for a in q.assessments:
        for var, value in a.values.items():
            if value is not None:
                out[(a.annotator, f"difficulty.{var}")] = plain(value)
        for name in SCALAR_FIELDS:
            value = getattr(a, name)
            if value is not None:
                out[(a.annotator, name)] = value
    for a, text in (notes or {}).items():
        if text:
            out[(a, "note")] = text
    for a, texts in (comments or {}).items():
        if texts:
            out[(a, "comments")] = tuple(texts)
    for a, label in (answerability or {}).items():
        if label is not None:
            out[(a, "answerability")] = label
    return out


def tag_changes_value(t: ProblemTag) -> dict:
    """A stored tag as the value of a `problem.add` (without its row id and annotator)."""
    v = {"type": t.type, "element": t.element, "note": t.note or ""}
    v.update({k: getattr(t, k) for k in ("alternative", "start", "end") if getattr(t, k) is not None})
    return v


def layer_value(q: Question, fld: str, annotator: str, found: Mapping[tuple[str, str], Any]) -> Any:
    """Annotator's version of `fld` in the shape `adjudication_changes` takes (tags as dicts)."""
    if fld == "problems":
        return [tag_changes_value(t) for t in q.problems if t.annotator == annotator]
    value = found.get((annotator, fld))
    return empty_value(fld) if value is None else value


def adjudication_changes(q: Question, fld: str, chosen: Any) -> list[Change]:
    """Changes that make `gold`'s layer of `fld` equal `chosen`.

    `fld` is a layer name (`evidence`, `required`, `basis.<k>`, `problems`,
    `difficulty.<var>`, `text_format`, `multiple_texts`, `unit_type`, `answerability`,
    `note`, `comments`); `chosen` is its value: (start, end) pairs for spans, dicts of
    `problem.add` for tags, the value itself otherwise.
    """
    item = q.id
    if is_span_field(fld):
        role, _, alt = fld.partition(".")
        out = [Change(item, "span.remove", {"id": s.id}, GOLD) for s in q.spans
               if s.annotator == GOLD and span_field(s.role, s.alternative) == fld]
        for start, end in sorted({tuple(x) for x in chosen}):
            v = {"role": role, "start": start, "end": end, "origin": "human"}
            if role == BASIS:
                v["alternative"] = int(alt)
            out.append(Change(item, "span.add", v, GOLD))
        return out
    if fld == "problems":
        out = [Change(item, "problem.remove", {"id": t.id}, GOLD) for t in q.problems if t.annotator == GOLD]
        return out + [Change(item, "problem.add", dict(v), GOLD) for v in chosen]
    if fld == "comments":
        return [Change(item, "comments", list(chosen or ()), GOLD)]
    return [Change(item, fld, list(chosen) if isinstance(chosen, tuple) else chosen, GOLD)]


def disagreements_of(q: Question, found: Mapping[tuple[str, str], Any]) -> list[dict]:
    """Fields on which the annotators of `q` (given its layers `found`) differ, sorted by field."""
    by_field: dict[str, dict[str, Any]] = {}
    for (annotator, fld), value in found.items():
        by_field.setdefault(fld, {})[annotator] = jsonable(value)
    out = []
    for fld, values in sorted(by_field.items()):
        raters = {a: v for a, v in values.items() if a != GOLD}
        if len(raters) >= 2 and len({json.dumps(v, sort_keys=True) for v in raters.values()}) > 1:
            out.append({"item": q.id, "field": fld, "values": values, "adjudicated": GOLD in values})
    return out


def disagreements(q: Question, notes: Mapping[str, str] | None = None,
                  comments: Mapping[str, list[str]] | None = None,
                  answerability: Mapping[str, str | None] | None = None) -> list[dict]:
    """Layers on which the annotators of one item differ: [{item, field, values: {annotator: value}, adjudicated}].

    `gold` and aliases of merged conflicts count as annotators; a field only one
    annotator filled is not a disagreement.
    """
    return disagreements_of(q, layers(q, notes, comments, answerability))
