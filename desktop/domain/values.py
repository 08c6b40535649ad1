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
# ASCII digits only: `str.isdigit` and `\d` also take "²" (which int() refuses) and "١" (which
# int() reads as 1), so a file could pass the check and crash the conversion, or mean another number
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_MAX_DIGITS = 18  # below int()'s 4,300-digit guard; no index or count in a dataset is longer
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


def whole_number(value: Any) -> int | None:
    """A count or index as a file writes it: a JSON integer >= 0, or a text of ASCII digits
    (spaces around allowed: "2", " 2 "); None for anything else ("²", "١", "-1", "2.0", true).

    Every reader that takes a number from a file (QuAIL `correct_answer_id`, CosmosQA `label`,
    column names like `answer3`) asks here, so that none of them calls int() on text it has
    not checked."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str):
        text = value.strip()
        digits = text.lstrip("0") or "0"  # leading zeros would count against int()'s digit guard
        if _WHOLE.fullmatch(text) and len(digits) <= _MAX_DIGITS:
            return int(digits)
    return None


def index_in(value: Any, n: int) -> int | None:
    """`value` as an index 0..n-1 (see `whole_number`), else None."""
    k = whole_number(value)
    return k if k is not None and k < n else None


def decimal_number(value: Any) -> float | None:
    """A finite number written with ASCII digits ("3", "-2.5", "1e3") or given as one; None
    for anything else: float() alone takes "nan", "inf", "1_000" and "١"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip()
        if _DECIMAL.fullmatch(text):
            number = float(text)
            return number if math.isfinite(number) else None
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
