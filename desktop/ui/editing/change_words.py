"""One edit in the annotator's words, for the status bar: "basis of B added", "TOI set to reason (4 pts)".

The store names edits by field ("span.add", "difficulty.toi"); people name them by
what they did.  `words(field, new, old)` turns an edit, or a history row (whose
`before`/`after` hold the stored span or tag), into that phrase.  No Qt here.
"""
from __future__ import annotations

import json
from typing import Any

from desktop.domain import difficulty as km
from desktop.domain import typology as ty
from desktop.domain.model import BASIS, EVIDENCE, MODEL, MODEL_ACCEPTED, REQUIRED, letter
from desktop.domain.words import points


def _as_dict(v: Any) -> dict:
    if isinstance(v, dict):
        return v
    if isinstance(v, str):
        try:
            d = json.loads(v)
            return d if isinstance(d, dict) else {}
        except ValueError:
            return {}
    return {}


def span_name(span: Any) -> str:
    """"evidence", "basis of B", "required paragraphs" for a Span or a stored span dict."""
    d = span if isinstance(span, dict) else getattr(span, "__dict__", {})
    role, alt = d.get("role"), d.get("alternative")
    if role == BASIS and alt is not None:
        return f"basis of {letter(int(alt))}"
    if role == REQUIRED:
        return "required paragraphs"
    if role == EVIDENCE:
        return "model evidence" if d.get("origin") == MODEL else "evidence"
    return "span"


def problem_name(tag: Any) -> str:
    d = tag if isinstance(tag, dict) else getattr(tag, "__dict__", {})
    t = ty.TYPES.get(d.get("type"))
    name = f"“{t.name}”" if t is not None else f"“{d.get('type', '?')}”"
    where = d.get("element") or ""
    if d.get("alternative") is not None:
        where = f"alternative {letter(int(d['alternative']))}"
    return f"problem {name} on {where}" if where else f"problem {name}"


def _category(var: str, value: Any) -> str:
    try:
        return f"{km.label(var, value)} ({points(km.points(var, value))})"
    except (KeyError, ValueError, TypeError, IndexError):
        return str(value)


def words(field: str, new: Any, old: Any = None) -> str:
    """What an edit of `field` from `old` to `new` did, as the annotator would say it."""
    if field == "span.add":
        return f"{span_name(_as_dict(new) or _as_dict(old))} added"
    if field == "span.remove":
        return f"{span_name(_as_dict(old) or _as_dict(new))} removed"
    if field == "span.update":
        d = _as_dict(new) or _as_dict(old)
        if d.get("origin") == MODEL_ACCEPTED:
            return f"{span_name(d)} accepted"
        return f"{span_name(d)} moved" + (f" to {d['start']}–{d['end']}" if "start" in d and "end" in d else "")
    if field == "problem.add":
        d = _as_dict(new)
        extra = _as_dict(d.get("extra"))
        if d.get("origin") == MODEL and extra.get("dismissed"):
            return f"suggestion dismissed: {problem_name(d)}"
        if d.get("origin") == MODEL_ACCEPTED:
            return f"suggestion accepted: {problem_name(d)}"
        return f"{problem_name(d)} added"
    if field == "problem.remove":
        return f"{problem_name(_as_dict(old) or _as_dict(new))} removed"
    if field.startswith("difficulty."):
        var = field.split(".", 1)[1]
        name = var.upper()
        if new is None:
            return f"{name} cleared"
        return f"{name} set to {_category(var, new)}"
    if field in ("comment", "comments"):
        n_new = len(new) if isinstance(new, list) else int(bool(new))
        n_old = len(old) if isinstance(old, list) else int(bool(old))
        if old is not None and n_new < n_old:
            return "comment deleted"
        return "comment saved"
    if field == "note":
        return "problems note saved" if new else "problems note cleared"
    if field == "status":
        return f"status set to {new}"
    if field == "answerability":
        return f"answerability set to {new}" if new else "answerability cleared"
    if field == "text_format":
        return f"text format set to {new}" if new else "text format cleared"
    if field == "unit_type":
        return f"MCQ unit type set to {new}" if new else "MCQ unit type cleared"
    if field == "multiple_texts":
        return "marked as a multiple-member text" if new else "marked as a single-member text"
    return field.replace(".", " ").replace("_", " ")


def history_words(row: Any) -> str:
    """A history row (change, undo or redo) as "Saved: …", "Undone: …", "Redone: …"."""
    kind = getattr(row, "kind", "change")
    if kind == "undo":  # the undo row holds the change backwards: before = what the change made
        return "Undone: " + words(row.field, row.before, row.after)
    if kind == "redo":
        return "Redone: " + words(row.field, row.after, row.before)
    return "Saved: " + words(row.field, row.after, row.before)
