"""Adjudication on a store: every annotator's layers of an item, their disagreements,
and the chosen (`adopt`) or edited (`adjudicate`) final version written under `gold`.

The decisions are `desktop.domain.adjudication`'s; this module only reads the layers
the store keeps per annotator and applies the changes through `Store.apply`, so each
gold edit has its history row and can be undone by `gold`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop.domain import adjudication as adj
from desktop.domain.agreement import GOLD
from desktop.domain.model import Question


@dataclass
class AnnotatorFields:
    """What a loaded Question does not say per annotator: {annotator: value} each."""

    notes: dict[str, str] = field(default_factory=dict)
    comments: dict[str, list[str]] = field(default_factory=dict)
    answerability: dict[str, str] = field(default_factory=dict)


def annotator_fields(store, item: str) -> AnnotatorFields:
    """Every annotator's note, comments and answerability label on `item`."""
    out = AnnotatorFields()
    for annotator in store.annotators():
        text = store.note(item, annotator)
        if text:
            out.notes[annotator] = text
    # The Store's reading API merges comments and labels of all annotators; these two
    # read-only lookups (the store's own tables, on its connection, indexed on
    # (question_id, annotator)) keep whose is whose until it offers a reader of its own.
    db = store.db()
    for row in db["comments"].rows_where("question_id = ?", [item], order_by="annotator, position, id",
                                         select="annotator, text"):
        out.comments.setdefault(row["annotator"], []).append(row["text"])
    for row in db["answerability"].rows_where("question_id = ?", [item], order_by="ts",
                                              select="annotator, label"):
        out.answerability[row["annotator"]] = row["label"]
    return out


def item_layers(store, item: str, q: Question | None = None) -> tuple[Question, dict[tuple[str, str], Any]]:
    """The item with everyone's annotations and all its layers, per-annotator fields included."""
    q = q if q is not None else store.question(item)
    more = annotator_fields(store, item)
    return q, adj.layers(q, more.notes, more.comments, more.answerability)


def item_disagreements(store, item: str) -> list[dict]:
    """`disagreements` of one stored item, notes, comments and answerability included."""
    q, found = item_layers(store, item)
    return adj.disagreements_of(q, found)


def adjudicate(store, item: str, fld: str, chosen_value: Any) -> list[int]:
    """Store `chosen_value` as the `gold` layer of `fld` on `item` (one transaction); returns the history ids."""
    q = store.question(item)
    with store.batch():
        return [store.apply(c) for c in adj.adjudication_changes(q, fld, chosen_value)]


def adopt(store, item: str, fld: str, annotator: str) -> list[int]:
    """Adjudicate by choosing one annotator's version of `fld` as gold."""
    q, found = item_layers(store, item)
    value = adj.layer_value(q, fld, annotator, found)
    with store.batch():
        return [store.apply(c) for c in adj.adjudication_changes(q, fld, value)]


def gold_history(store, item: str) -> list:
    """The history rows of `gold` on `item`, oldest first."""
    return [h for h in store.history(item) if h.annotator == GOLD]


def disagreeing_items(store, source: str | None = None) -> list[dict]:
    """The items on which annotators disagree, in import order: [{item, fields, open}] where
    `fields` are the fields they differ on and `open` those not adjudicated yet.

    Only items that two or more annotators (gold aside) worked on are compared: one
    query finds them, then each is compared as the Adjudicate dialog compares it."""
    # Every per-annotator table; ids of items where two annotators left something.
    sql = ("SELECT question_id FROM (" + " UNION ".join(
        f"SELECT question_id, annotator FROM {t}" for t in
        ("spans", "assessments", "problems", "comments", "answerability", "notes"))
        + ") WHERE annotator != ? GROUP BY question_id HAVING COUNT(DISTINCT annotator) >= 2")
    candidates = {r[0] for r in store.db().conn.execute(sql, (GOLD,))}
    out = []
    for row in store.items(source=source):
        if row.item_id not in candidates:
            continue
        found = item_disagreements(store, row.item_id)
        if found:
            out.append({"item": row.item_id, "fields": [d["field"] for d in found],
                        "open": [d["field"] for d in found if not d["adjudicated"]]})
    return out
