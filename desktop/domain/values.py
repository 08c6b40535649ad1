"""What a stored value may be, so that every export, report and merge can write it back.

JSON allows things that UTF-8, SQLite or our own reader do not: a lone surrogate escape
("\\ud800") cannot be encoded as UTF-8; a number like 1e999 becomes Infinity, which JSON
cannot write; a value nested hundreds deep breaks every recursive copy.  `problem(value)`
finds the first such thing (with the path to it), so the door can refuse it with the
field's name instead of a traceback at the database insert or in a later export.
"""
from __future__ import annotations

import math
import re
from typing import Any

# Deeper than any real dataset (EMBRACE records are 6 levels deep) and far below
# Python's recursion limit, which deepcopy and json.dumps reach at ~330 levels.
MAX_DEPTH = 64

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f]")


def text_problem(s: str) -> str | None:
    """Why a text cannot be stored as UTF-8 (None if it can)."""
    if s.isascii():  # O(1) in CPython: most texts end here
        return None
    m = _SURROGATE.search(s)
    if m:
        return (f"lone surrogate U+{ord(m.group()):04X} at character {m.start()}: not valid Unicode text "
                "(a \\ud800-style escape without its pair?)")
    return None


def id_problem(ident: str) -> str | None:
    """Why an id cannot name an item (None if it can): ids are typed, shown and used in file names."""
    if not isinstance(ident, str) or not ident.strip():
        return "an id must be a non-empty text"
    bad = text_problem(ident)
    if bad:
        return bad
    m = _CONTROL.search(ident)
    if m:
        return f"control character U+{ord(m.group()):04X} at character {m.start()} in the id {ident!r}"
    return None


def _short(path: str, keep: int = 60) -> str:
    return path if len(path) <= keep else path[:keep] + "..."


def could_have_problem(json_text: str) -> bool:
    """Whether the JSON text of a value (as json.dumps wrote it, non-ASCII kept) can hide one of
    `problem`'s findings; False lets a caller skip the walk (surrogates, NaN/Infinity and deep
    nesting all show in the text)."""
    return ("NaN" in json_text or "Infinity" in json_text
            or json_text.count("[") + json_text.count("{") > MAX_DEPTH
            or (not json_text.isascii() and _SURROGATE.search(json_text) is not None))


def problem(value: Any, path: str = "") -> tuple[str, str] | None:
    """(path, what is wrong) for the first value JSON + UTF-8 cannot carry, else None.

    Walks iteratively (no recursion, so deep values are measured, not crashed on)."""
    stack = [(value, path, 0)]
    while stack:
        v, where, depth = stack.pop()
        if isinstance(v, str):
            bad = text_problem(v)
            if bad:
                return where, bad
        elif isinstance(v, bool) or v is None or isinstance(v, int):
            continue
        elif isinstance(v, float):
            if not math.isfinite(v):
                what = "not a number (NaN)" if v != v else "a number out of range (like 1e999: read as infinity)"
                return where, f"{what}; JSON cannot write it back"
        elif isinstance(v, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                return _short(where), f"nested more than {MAX_DEPTH} levels deep"
            if isinstance(v, dict):
                for k, item in v.items():
                    if not isinstance(k, str):
                        return where, f"key {k!r} is not a text"
                    sub = f"{where}.{k}" if where else k
                    bad = text_problem(k)
                    if bad:
                        return sub, f"key: {bad}"
                    stack.append((item, sub, depth + 1))
            else:
                for i, item in enumerate(v):
                    stack.append((item, f"{where}[{i}]", depth + 1))
        else:
            return where, f"a {type(v).__name__} is not a JSON value"
    return None
