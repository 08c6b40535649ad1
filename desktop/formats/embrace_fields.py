"""An EMBRACE record's annotation fields through the vocabulary (`embrace_vocab`), for the
reader and the writer alike; lenient where a file of another release holds strings the
vocabulary lacks (those keys stay raw, and so in the export)."""
from __future__ import annotations

import json
import re
from typing import Any

from desktop.domain.model import ProblemTag

from . import embrace_vocab as V

PREFIX = re.compile(r"^\(([A-Za-z])\) ?")


def normal(value: Any) -> Any:
    """JSON-normalised copy, so values that went through the store compare equal to fresh ones."""
    return json.loads(json.dumps(value, sort_keys=True, default=list))


def parse_difficulty(raw: dict | None) -> tuple[dict, list[str]]:
    """(values, raw keys whose strings the vocabulary does not know).

    EMBRACE files outside this release may hold strings the vocabulary lacks; those
    keys stay in the raw dict (and so in the export) instead of refusing the file."""
    if raw is None:
        return {}, []
    known, unknown = dict(raw), []
    while True:
        try:
            return V.parse_difficulty(known), unknown
        except ValueError as exc:
            key = str(getattr(exc, "field", "")).split(".", 1)[-1]
            if key not in known:
                raise
            unknown.append(key)
            del known[key]


def unparse_difficulty(values: dict, raw: dict | None) -> dict | None:
    _, unknown = parse_difficulty(raw)
    known = {k: v for k, v in (raw or {}).items() if k not in unknown}
    out = V.unparse_difficulty(values, known)
    if out is None:
        return None
    out = dict(out)
    for k in unknown:  # the unknown strings stay unless the edit wrote that field anew
        out.setdefault(k, raw[k])
    return out


def parse_problems(text_flags: dict, qrec: dict) -> list[ProblemTag]:
    return list(V.problems_from_embrace(text_flags, qrec))


def text_format(qrec: dict) -> dict:
    return V.text_format_from_embrace(qrec)


def tag_key(tags: list[ProblemTag]) -> list:
    return sorted(normal([t.type, t.element, t.note, t.alternative, t.start, t.end]) for t in tags)
