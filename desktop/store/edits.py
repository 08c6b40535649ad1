"""Applying `Change`s: `Store.apply` (the part `Edits`, at the end), and the state of one
field before and after, so that undo can restore it.

Every field has a *state* that can be read and written back:

* set-like fields (comment(s), answerability, note, difficulty.<var>, text_format,
  multiple_texts, unit_type, status) are per annotator (status since schema 3:
  `item_status`, no row = "untouched");
* span.* and problem.* act on one row: the state is the whole row (a dict) or None
  when the row does not exist, so add, remove and update all undo by writing the
  other state back.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from desktop.domain import difficulty, typology, values
from desktop.domain.changes import STATUSES, Change, is_known_field
from desktop.domain.errors import StoreError
from desktop.domain.model import ANSWERABILITY, BASIS, HUMAN, IMPORTED, ORIGINS, ROLES

from . import conflicts, imports
from .connection import Connection
from .decode import loads
from .history import History
from .imports import dumps, now

ASSESSMENT_COLUMNS = ("text_format", "multiple_texts", "unit_type")
SPAN_KEYS = ("id", "question_id", "role", "alternative", "start", "end", "annotator", "origin", "extra")
PROBLEM_KEYS = ("id", "question_id", "type", "element", "annotator", "origin", "note", "alternative",
                "start", "end", "extra")


def _bad(change: Change, message: str) -> StoreError:
    return StoreError(f"item {change.item}, field {change.field}: {message}")


def _int(change: Change, value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(change, f"{name} must be an integer, got {value!r}")
    return value


# ---------------------------------------------------------------- reading states

def get_state(conn, item: str, field: str, annotator: str, target: int | None = None) -> Any:
    if field in ("comment", "comments"):
        return [r[0] for r in conn.execute(
            "SELECT text FROM comments WHERE question_id=? AND annotator=? ORDER BY position, id", (item, annotator))]
    if field == "answerability":
        row = conn.execute("SELECT label FROM answerability WHERE question_id=? AND annotator=?",
                           (item, annotator)).fetchone()
        return row[0] if row else None
    if field == "status":
        row = conn.execute("SELECT status FROM item_status WHERE question_id=? AND annotator=?",
                           (item, annotator)).fetchone()
        return row[0] if row else "untouched"
    if field == "note":
        row = conn.execute("SELECT text FROM notes WHERE question_id=? AND annotator=?", (item, annotator)).fetchone()
        return row[0] if row else None
    if field.startswith("difficulty."):
        values = _assessment(conn, item, annotator)
        return None if values is None else loads(values["values"], "assessments", "values", item, dict).get(field.split(".", 1)[1])
    if field in ASSESSMENT_COLUMNS:
        values = _assessment(conn, item, annotator)
        if values is None or values[field] is None:
            return None
        return bool(values[field]) if field == "multiple_texts" else values[field]
    if field.startswith("span."):
        return _row(conn, "spans", SPAN_KEYS, target)
    if field.startswith("problem."):
        return _row(conn, "problems", PROBLEM_KEYS, target)
    raise StoreError(f"unknown field {field!r}")


def _assessment(conn, item: str, annotator: str):
    cur = conn.execute('SELECT id, "values", text_format, multiple_texts, unit_type, origin FROM assessments '
                       "WHERE question_id=? AND annotator=? ORDER BY id LIMIT 1", (item, annotator))
    row = cur.fetchone()
    if row is None:
        return None
    return dict(zip(("id", "values", "text_format", "multiple_texts", "unit_type", "origin"), row))


def _row(conn, table: str, keys: tuple, row_id: int | None) -> dict | None:
    if row_id is None:
        return None
    cols = ", ".join(f'"{k}"' for k in keys)
    row = conn.execute(f"SELECT {cols} FROM {table} WHERE id=?", (row_id,)).fetchone()
    if row is None:
        return None
    out = dict(zip(keys, row))
    out["extra"] = loads(out["extra"], table, "extra", row_id, dict)
    return out


# ---------------------------------------------------------------- writing states

def set_state(conn, item: str, field: str, annotator: str, state: Any, target: int | None = None) -> int | None:
    """Write `state`; returns the row id for span/problem fields (a new one when `state["id"]` is None)."""
    if field in ("comment", "comments"):
        conn.execute("DELETE FROM comments WHERE question_id=? AND annotator=?", (item, annotator))
        conn.executemany("INSERT INTO comments (question_id, annotator, origin, position, text) VALUES (?,?,?,?,?)",
                         [(item, annotator, HUMAN, i, t) for i, t in enumerate(state or [])])
    elif field == "answerability":
        conn.execute("DELETE FROM answerability WHERE question_id=? AND annotator=?", (item, annotator))
        if state is not None:
            conn.execute("INSERT INTO answerability (question_id, annotator, label, origin, ts) VALUES (?,?,?,?,?)",
                         (item, annotator, state, HUMAN, now()))
    elif field == "status":
        set_status(conn, item, annotator, state)
    elif field == "note":
        conn.execute("DELETE FROM notes WHERE question_id=? AND annotator=?", (item, annotator))
        if state:
            conn.execute("INSERT INTO notes (question_id, annotator, text) VALUES (?,?,?)", (item, annotator, state))
    elif field.startswith("difficulty.") or field in ASSESSMENT_COLUMNS:
        _set_assessment(conn, item, field, annotator, state)
    elif field.startswith("span."):
        return _put_row(conn, "spans", SPAN_KEYS, target, state)
    elif field.startswith("problem."):
        return _put_row(conn, "problems", PROBLEM_KEYS, target, state)
    else:
        raise StoreError(f"unknown field {field!r}")
    return None


def set_status(conn, item: str, annotator: str, status: str) -> None:
    """`annotator`'s own progress on `item`; "untouched" is the absence of a row."""
    if status == "untouched":
        conn.execute("DELETE FROM item_status WHERE question_id=? AND annotator=?", (item, annotator))
        return
    conn.execute("INSERT INTO item_status (question_id, annotator, status, ts) VALUES (?,?,?,?) "
                 "ON CONFLICT (question_id, annotator) DO UPDATE SET status=excluded.status, ts=excluded.ts",
                 (item, annotator, status, now()))


def touch(conn, item: str, annotator: str) -> None:
    """An edit moves the annotator's status from "untouched" to "in progress" (never back from done)."""
    conn.execute("INSERT OR IGNORE INTO item_status (question_id, annotator, status, ts) VALUES (?,?,?,?)",
                 (item, annotator, "in progress", now()))


def _set_assessment(conn, item: str, field: str, annotator: str, state: Any) -> None:
    row = _assessment(conn, item, annotator)
    if row is None:
        if state is None:
            return
        cur = conn.execute("INSERT INTO assessments (question_id, annotator, origin) VALUES (?,?,?)",
                           (item, annotator, HUMAN))
        row = {"id": cur.lastrowid, "values": "{}", "text_format": None, "multiple_texts": None,
               "unit_type": None, "origin": HUMAN}
    if field.startswith("difficulty."):
        values = loads(row["values"], "assessments", "values", row["id"], dict)
        var = field.split(".", 1)[1]
        if state is None:
            values.pop(var, None)
        else:
            values[var] = state
        row["values"] = dumps(values)
    else:
        row[field] = (None if state is None else int(bool(state))) if field == "multiple_texts" else state
    if (row["origin"] != IMPORTED and row["values"] == "{}"
            and all(row[c] is None for c in ASSESSMENT_COLUMNS)):
        # an emptied assessment of one's own is no assessment: undo leaves no trace in the counts
        conn.execute("DELETE FROM assessments WHERE id=?", (row["id"],))
        return
    conn.execute('UPDATE assessments SET "values"=?, text_format=?, multiple_texts=?, unit_type=? WHERE id=?',
                 (row["values"], row["text_format"], row["multiple_texts"], row["unit_type"], row["id"]))


def _put_row(conn, table: str, keys: tuple, row_id: int | None, state: dict | None) -> int | None:
    # AUTOINCREMENT ids are never reused, so re-inserting a removed row under its old id is safe
    if row_id is not None:
        conn.execute(f"DELETE FROM {table} WHERE id=?", (row_id,))
    if state is None:
        return row_id
    if state.get("id") is None:
        keys = tuple(k for k in keys if k != "id")
    values = [dumps(state[k]) if k == "extra" else state[k] for k in keys]
    cols = ", ".join(f'"{k}"' for k in keys)
    cur = conn.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(keys))})", values)
    return state.get("id") or cur.lastrowid


# ---------------------------------------------------------------- one change

def plan_change(conn, change: Change, annotator: str) -> tuple[Any, Any, int | None]:
    """Check a change against the item; returns (before, after, target row id)."""
    field, value, item = change.field, change.value, change.item
    if not is_known_field(field):
        raise _bad(change, "unknown field")
    bad = values.problem(value)
    if bad is not None:  # what the store keeps, every export must be able to write
        raise _bad(change, f"{bad[0] + ': ' if bad[0] else ''}{bad[1]}")
    q = conn.execute("SELECT passage_id, alternatives FROM questions WHERE id=?", (item,)).fetchone()
    if q is None:
        raise StoreError(f"unknown item {item!r}")
    n_alternatives = len(loads(q[1], "questions", "alternatives", item, list))
    # counted in Python: SQLite's length() stops at the first NUL character of a text
    text_len = len(conn.execute("SELECT text FROM passages WHERE id=?", (q[0],)).fetchone()[0])
    target = None
    if field == "comment":
        if not isinstance(value, str):
            raise _bad(change, "a comment is a text")
        after: Any = [value] if value.strip() else []
    elif field == "comments":
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise _bad(change, "comments are a list of texts")
        after = list(value)
    elif field == "answerability":
        if value is not None and value not in ANSWERABILITY:
            raise _bad(change, f"answerability is one of {', '.join(ANSWERABILITY)} or null")
        after = value
    elif field == "status":
        if value not in STATUSES:
            raise _bad(change, f"status is one of {', '.join(STATUSES)}")
        after = value
    elif field == "note":
        if value is not None and not isinstance(value, str):
            raise _bad(change, "a note is a text")
        after = value or None
    elif field.startswith("difficulty."):
        var = field.split(".", 1)[1]
        if var not in difficulty.VARIABLES:
            raise _bad(change, f"unknown difficulty variable {var!r}; one of {', '.join(difficulty.VARIABLES)}")
        if value is not None:
            try:  # the scale's own vocabulary: a category it cannot score, no export can write
                difficulty.points(var, value)
            except (ValueError, TypeError, KeyError) as exc:
                known = ", ".join(map(repr, difficulty.categories(var)))
                raise _bad(change, f"{exc}; known categories: {known}") from None
        after = value
    elif field == "multiple_texts":
        if value is not None and not isinstance(value, bool):
            raise _bad(change, "multiple_texts is true, false or null")
        after = value
    elif field in ("text_format", "unit_type"):
        known = difficulty.TEXT_FORMATS if field == "text_format" else difficulty.UNIT_TYPES
        if value is not None and value not in known:
            raise _bad(change, f"{field} is one of {', '.join(known)} or null, not {value!r}")
        after = value
    elif field == "span.add":
        after = _new_span(change, annotator, n_alternatives, text_len)
    elif field in ("span.remove", "span.update", "problem.remove"):
        table = "spans" if field.startswith("span.") else "problems"
        target = _int(change, (value or {}).get("id") if isinstance(value, dict) else None, "id")
        row = get_state(conn, item, field, annotator, target)
        if row is None or row["question_id"] != item:
            raise _bad(change, f"no {table[:-1]} {target} on this item")
        if field.endswith(".remove"):
            after = None
        else:
            after = dict(row)
            start, end = _int(change, value.get("start"), "start"), _int(change, value.get("end"), "end")
            if not 0 <= start <= end <= text_len:
                raise _bad(change, f"offsets {start}..{end} outside the passage (length {text_len})")
            after["start"], after["end"] = start, end
            if "origin" in value:
                if value["origin"] not in ORIGINS:
                    raise _bad(change, f"unknown origin {value['origin']!r}")
                after["origin"] = value["origin"]
    elif field == "problem.add":
        after = _new_problem(change, annotator, n_alternatives, text_len)
    else:  # pragma: no cover - is_known_field guards
        raise _bad(change, "unknown field")
    before = get_state(conn, item, field, annotator, target) if not field.endswith(".add") else None
    return before, after, target


def _new_span(change: Change, annotator: str, n_alternatives: int, text_len: int) -> dict:
    v = change.value
    if not isinstance(v, dict):
        raise _bad(change, 'a span is {"role", "start", "end", "alternative"?, "origin"?}')
    role = v.get("role", "evidence")
    if role not in ROLES:
        raise _bad(change, f"role is one of {', '.join(ROLES)}")
    start, end = _int(change, v.get("start"), "start"), _int(change, v.get("end"), "end")
    if not 0 <= start <= end <= text_len:
        raise _bad(change, f"offsets {start}..{end} outside the passage (length {text_len})")
    alternative = v.get("alternative")
    if role == BASIS:
        alternative = _int(change, alternative, "alternative")
        if not 0 <= alternative < n_alternatives:
            raise _bad(change, f"alternative {alternative} does not exist ({n_alternatives} alternatives)")
    elif alternative is not None:
        alternative = _int(change, alternative, "alternative")
    origin = v.get("origin", HUMAN)
    if origin not in ORIGINS:
        raise _bad(change, f"unknown origin {origin!r}")
    return {"id": None, "question_id": change.item, "role": role, "alternative": alternative, "start": start,
            "end": end, "annotator": annotator, "origin": origin, "extra": _extra(change, v)}


def _new_problem(change: Change, annotator: str, n_alternatives: int, text_len: int) -> dict:
    v = change.value
    if not isinstance(v, dict) or not isinstance(v.get("type"), str) or not isinstance(v.get("element"), str):
        raise _bad(change, 'a problem is {"type", "element", "note"?, "alternative"?, "start"?, "end"?}')
    # the typology's vocabulary: reports and the EMBRACE writer know only these (whether a
    # type suits its element is the window's warning, not a reason to lose the tag)
    if v["type"] not in typology.TYPES:
        raise _bad(change, f"unknown problem type {v['type']!r}; known types: {', '.join(typology.TYPES)}")
    if v["element"] not in typology.ELEMENTS:
        raise _bad(change, f"unknown element {v['element']!r}; one of {', '.join(typology.ELEMENTS)}")
    if v.get("note") is not None and not isinstance(v["note"], str):
        raise _bad(change, "a problem's note is a text")
    start, end = v.get("start"), v.get("end")
    if start is not None or end is not None:
        start, end = _int(change, start, "start"), _int(change, end, "end")
        if not 0 <= start <= end <= text_len:
            raise _bad(change, f"offsets {start}..{end} outside the passage")
    alternative = v.get("alternative")
    if alternative is not None and not 0 <= _int(change, alternative, "alternative") < n_alternatives:
        raise _bad(change, f"alternative {alternative} does not exist")
    origin = v.get("origin", HUMAN)
    if origin not in ORIGINS:
        raise _bad(change, f"unknown origin {origin!r}")
    return {"id": None, "question_id": change.item, "type": v["type"], "element": v["element"],
            "annotator": annotator, "origin": origin, "note": v.get("note") or "", "alternative": alternative,
            "start": start, "end": end, "extra": _extra(change, v)}


def _extra(change: Change, v: dict) -> dict:
    extra = v.get("extra")
    if extra is None:
        return {}
    if not isinstance(extra, dict):  # writers read keys from it
        raise _bad(change, f"extra must be an object, not {type(extra).__name__}")
    return extra


def target_of(field: str, before: Any, after: Any) -> int | None:
    if field.startswith(("span.", "problem.")):
        return (after or before)["id"]
    return None


class Edits:
    """`apply`: one change, its history row and its status move, in one transaction;
    `annotator()` is the store's annotator of the moment."""

    def __init__(self, connection: Connection, audit: History, annotator: Callable[[], str]):
        self._c, self._audit, self._annotator = connection, audit, annotator

    def apply(self, change: Change, expect: Any = conflicts.NOT_GIVEN) -> int:
        """Apply one edit in one transaction with its history row; returns the history id.

        A question edited for the first time by an annotator moves from "untouched" to
        "in progress" for that annotator (status is each annotator's own).
        `expect`: the field's value as the editing window showed it; if another program
        changed it since, `StaleEditError` (a StoreError) is raised and nothing is written.
        """
        who = change.annotator or self._annotator()
        with self._c.transaction() as conn:
            before, after, target = plan_change(conn, change, who)
            conflicts.check(conn, change, who, before, expect)
            ensure_annotator(conn, who)
            row_id = set_state(conn, change.item, change.field, who, after, target)
            if change.field.endswith(".add"):
                after = dict(after, id=row_id)
            if change.field != "status":
                touch(conn, change.item, who)
            conn.execute("UPDATE questions SET row_version = row_version + 1 WHERE id=?", (change.item,))
            # a fresh edit ends what this annotator could still redo
            conn.execute("UPDATE history SET undone=2 WHERE annotator=? AND kind='change' AND undone=1", (who,))
            return self._audit.record(conn, who, change.item, change.field, before, after)


def ensure_annotator(conn, name: str) -> None:
    """The annotator's row (a human), added the first time they edit."""
    conn.execute("INSERT OR IGNORE INTO annotators (name, kind, created_at) VALUES (?, 'human', ?)",
                 (name, imports.now()))
