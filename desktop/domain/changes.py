"""A user action as plain data: the one unit of editing, undo and audit.

The workbench, `mcqlens annotate` (one JSON object per line) and merges all
express edits as `Change`s; `desktop.store` applies each in one transaction that
also writes its history row (who, when, field, before, after).

Fields (`Change.field`) and the shape of `value`:

=====================  =======================================================
comment                str — replaces the item's comments with this one text
comments               list[str]
answerability          "answerable" | "unanswerable" | "unsure" | None
status                 "untouched" | "in progress" | "done"
difficulty.<var>       category key of a Kirsch–Mosenthal variable (toi, tom
                       [t_q, t_a], nphr, ni, nit, npar, ic, pod, toc), None clears
text_format            continuous | partly continuous | non-continuous | mixed
multiple_texts         bool
unit_type              content | structure | vocabulary
span.add               {"role", "start", "end", "alternative"?, "origin"?}
span.remove            {"id"}
span.update            {"id", "start", "end"}
problem.add            {"type", "element", "note"?, "alternative"?, "start"?, "end"?, "origin"?}
problem.remove         {"id"}
note                   str — the free-text problems note
=====================  =======================================================
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STATUSES = ("untouched", "in progress", "done")

FIELDS = (
    "comment", "comments", "answerability", "status", "text_format", "multiple_texts",
    "unit_type", "span.add", "span.remove", "span.update", "problem.add", "problem.remove", "note",
)


def is_known_field(name: str) -> bool:
    return name in FIELDS or name.startswith("difficulty.")


@dataclass(frozen=True)
class Change:
    """Set `field` of question `item` to `value`, on behalf of `annotator`."""

    item: str
    field: str
    value: Any
    annotator: str | None = None  # None: the store's current annotator
