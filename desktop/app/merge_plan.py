"""Planning a merge: which layers of another annotator's work this store lacks, and the conflicts.

A *layer* is what one annotator said about one field of one item (the evidence spans, the
bases of alternative k, the required paragraphs, the problem tags, one difficulty variable,
text format, unit type, note, comments, answerability).  Planning reads the store and writes
nothing; `desktop.app.merge` carries a plan out.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from desktop.domain.adjudication import jsonable, layers, span_field, span_value
from desktop.domain.changes import Change
from desktop.domain.model import BASIS, Dataset, Question
from desktop.store.adjudication import annotator_fields


@dataclass
class Conflict:
    """Same item, field and annotator, two values: `ours` stays, `theirs` is kept as `kept_as`."""

    item: str
    field: str
    annotator: str
    ours: Any
    theirs: Any
    kept_as: str


@dataclass
class MergePlan:
    new_items: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged_layers: int = 0
    skipped: list[dict] = field(default_factory=list)  # same id, different item: never merged


# --------------------------------------------------------------------------- layers


class Incoming(dict):
    """What the other side says per annotator beyond its datasets.

    As a dict it is {item: {annotator: note}} (the `notes` that `merge` always took);
    `comments` ({item: {annotator: [texts]}}) and `answerability` ({item: {annotator:
    label}}) ride along.  `from_store`: read from another store, whose loaded
    questions merge everyone's comments, so new items take them as edits instead.
    """

    def __init__(self, notes=None, comments=None, answerability=None, from_store: bool = False):
        super().__init__(notes or {})
        self.comments: dict[str, dict[str, list[str]]] = comments or {}
        self.answerability: dict[str, dict[str, str]] = answerability or {}
        self.from_store = from_store


def _spans_of(q: Question, annotator: str, fld: str) -> dict[tuple, Any]:
    out = {}
    for s in q.spans:
        if s.annotator == annotator and span_field(s.role, s.alternative) == fld:
            out[span_value(s)] = s
    return out


def _layer_changes(theirs_q: Question, annotator: str, fld: str, value: Any, write_as: str) -> list[Change]:
    """The changes that create layer (annotator, fld) = value under the name `write_as`."""
    item = theirs_q.id
    if fld == "problems":
        out = []
        for t in theirs_q.problems:
            if t.annotator == annotator:
                v = {"type": t.type, "element": t.element, "note": t.note or "", "origin": t.origin}
                v.update({k: getattr(t, k) for k in ("alternative", "start", "end") if getattr(t, k) is not None})
                if t.extra:
                    v["extra"] = t.extra
                out.append(Change(item, "problem.add", v, write_as))
        return _dedupe(out)
    if fld in ("evidence", "required") or fld.startswith(f"{BASIS}."):
        spans = _spans_of(theirs_q, annotator, fld)
        out = []
        for start, end in value:
            s = spans[(start, end)]
            v = {"role": s.role, "start": start, "end": end, "origin": s.origin}
            if s.role == BASIS:
                v["alternative"] = s.alternative
            if s.extra:
                v["extra"] = s.extra
            out.append(Change(item, "span.add", v, write_as))
        return out
    if fld == "comments":
        return [Change(item, "comments", list(value), write_as)]
    if fld.startswith("difficulty."):
        return [Change(item, fld, list(value) if isinstance(value, tuple) else value, write_as)]
    return [Change(item, fld, value, write_as)]


def _dedupe(changes: list[Change]) -> list[Change]:
    seen, out = set(), []
    for c in changes:
        key = json.dumps(c.value, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _same_item(a: Question, b: Question) -> bool:
    return (a.passage_id, a.stem, list(a.alternatives), a.key) == (b.passage_id, b.stem, list(b.alternatives), b.key)


def plan_question(ours: Question, theirs: Question, label: str, our_notes: dict[str, str] | None = None,
                  their_notes: dict[str, str] | None = None, our_fields: dict[str, dict] | None = None,
                  their_fields: dict[str, dict] | None = None) -> tuple[list[Change], list[Conflict], int]:
    """Changes that bring `theirs`' layers into `ours`, the conflicts, and how many layers were already there.

    `*_notes` are {annotator: note}; `*_fields` are {"comments": {annotator: [texts]},
    "answerability": {annotator: label}}, as each side keeps them per annotator."""
    mine = layers(ours, our_notes, **(our_fields or {}))
    incoming = layers(theirs, their_notes, **(their_fields or {}))
    changes: list[Change] = []
    conflicts: list[Conflict] = []
    unchanged = 0
    for (annotator, fld), value in sorted(incoming.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        current = mine.get((annotator, fld))
        if current == value:
            unchanged += 1
            continue
        if current is None:
            changes += _layer_changes(theirs, annotator, fld, value, annotator)
            continue
        # Same annotator, other value: keep ours, keep theirs beside it under an alias
        # (the first alias that is free or already holds exactly this value).
        n, alias = 1, f"{annotator}@{label}"
        while mine.get((alias, fld)) not in (None, value):
            n += 1
            alias = f"{annotator}@{label}#{n}"
        conflicts.append(Conflict(ours.id, fld, annotator, jsonable(current), jsonable(value), alias))
        if mine.get((alias, fld)) is None:
            changes += _layer_changes(theirs, annotator, fld, value, alias)
        else:
            unchanged += 1
    return changes, conflicts, unchanged


def plan_merge(store, datasets: list[Dataset], label: str,
               notes: dict[str, dict[str, str]] | None = None) -> MergePlan:
    """Compare incoming datasets with the store; writes nothing.

    `notes` are {item: {annotator: text}}; an `Incoming` (what `read_other` gives)
    also brings the comments and answerability labels per item and annotator."""
    plan = MergePlan()
    notes = {} if notes is None else notes  # an empty Incoming still carries comments
    comments = getattr(notes, "comments", {})
    labels = getattr(notes, "answerability", {})
    known = {row.item_id for row in store.items()}
    for ds in datasets:
        for p in ds.passages:
            for q in p.questions:
                if q.id not in known:
                    plan.new_items.append(q.id)
                    continue
                ours = store.question(q.id)
                if not _same_item(ours, q):
                    plan.skipped.append({"item": q.id, "reason": "stored with another passage, stem, "
                                                               "alternatives or key"})
                    continue
                theirs_notes, their_comments, their_labels = notes.get(q.id), comments.get(q.id), labels.get(q.id)
                our_notes = our_fields = their_fields = None
                if theirs_notes or their_comments or their_labels:
                    mine = annotator_fields(store, q.id)
                    our_notes = mine.notes
                    our_fields = {"comments": mine.comments, "answerability": mine.answerability}
                    their_fields = {"comments": their_comments or {}, "answerability": their_labels or {}}
                changes, conflicts, unchanged = plan_question(ours, q, label, our_notes, theirs_notes,
                                                              our_fields, their_fields)
                plan.changes += changes
                plan.conflicts += conflicts
                plan.unchanged_layers += unchanged
    return plan
