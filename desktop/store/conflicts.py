"""Stale-writer detection: an edit made on what a window showed, not on what is stored now.

Two windows (or a window and `mcqlens annotate`) on one database both write; the
later write of a field wins and the earlier stays in history.  That is only safe
when the later writer *saw* the earlier value.  A window therefore passes what it
displayed as `expect` to `Store.apply(change, expect=...)`; when the stored value
differs, the change is refused with `StaleEditError`, which says who changed the
field and when, and carries the current value so the window can refresh the item
(or warn and let the user re-apply on purpose, without `expect`).
"""
from __future__ import annotations

from typing import Any

from desktop.domain.changes import Change
from desktop.domain.errors import StoreError


class _NotGiven:
    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Any = _NotGiven()

# fields whose state is shared by every annotator; the others are each annotator's own
# (status too, since schema 3: each annotator's progress is their own)
_SHARED: tuple[str, ...] = ()
# fields that read and write the same state
_SAME_STATE = {"comment": ("comment", "comments"), "comments": ("comment", "comments")}


class StaleEditError(StoreError):
    """The field changed since the editing window read it; nothing was written."""

    def __init__(self, item: str, field: str, expected: Any, current: Any, by: dict | None):
        self.item, self.field, self.expected, self.current, self.by = item, field, expected, current, by
        who = f" by {by['annotator']} at {by['ts']} (history {by['id']})" if by else ""
        super().__init__(f"item {item}, field {field}: changed{who} since this window read it "
                         f"(now {current!r}, the window showed {expected!r}); reload the item and edit again")


def normalise(field: str, value: Any) -> Any:
    """`expect` in the shape `edits.get_state` gives for the field."""
    if field == "comment" and isinstance(value, str):
        return [value] if value.strip() else []
    if field == "note":
        return value or None
    return value


def matches(field: str, expected: Any, current: Any) -> bool:
    if field.startswith(("span.", "problem.")):
        # a window knows a span/problem by the keys it shows; compare only those
        if current is None or expected is None:
            return current is None and expected is None
        if not isinstance(expected, dict):
            return False
        return all(current.get(k) == v for k, v in expected.items())
    return normalise(field, expected) == current


def check(conn, change: Change, annotator: str, current: Any, expected: Any) -> None:
    """Raise StaleEditError when `current` (the stored state) is not what the window expected."""
    if expected is NOT_GIVEN or change.field.endswith(".add"):
        return
    if matches(change.field, expected, current):
        return
    fields = _SAME_STATE.get(change.field, (change.field,))
    marks = ", ".join("?" * len(fields))
    sql = (f"SELECT id, annotator, ts FROM history WHERE item=? AND field IN ({marks}) "
           "AND kind IN ('change', 'undo', 'redo')")
    params: list[Any] = [change.item, *fields]
    if change.field not in _SHARED and not change.field.startswith(("span.", "problem.")):
        sql += " AND annotator=?"
        params.append(annotator)
    row = conn.execute(sql + " ORDER BY id DESC LIMIT 1", params).fetchone()
    by = dict(zip(("id", "annotator", "ts"), row)) if row else None
    raise StaleEditError(change.item, change.field, expected, current, by)
