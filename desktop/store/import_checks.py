"""What an imported question must be before it is stored: ids, texts, alternatives, key,
answerability, spans and problems inside the passage, finite probabilities.  Each failure is an
InputError naming the file, the record and the field."""
from __future__ import annotations

import math
from typing import Any

from desktop.domain import values
from desktop.domain.errors import InputError
from desktop.domain.model import ANSWERABILITY, BASIS, ORIGINS, ROLES, Question


def check_text(file: str, record: str, field: str, value: Any, what: str) -> None:
    if type(value) is str and value.isascii():  # O(1): nothing to check in ASCII text
        return
    if not isinstance(value, str):
        raise InputError(file, record, field, f"{what} must be text")
    bad = values.text_problem(value)
    if bad:
        raise InputError(file, record, field, bad)


def check_id(file: str, ident: Any, what: str) -> None:
    bad = values.id_problem(ident) if isinstance(ident, str) else f"{what} id must be a non-empty string"
    if bad:
        raise InputError(file, repr(ident) if isinstance(ident, str) else ident, "id", bad)


def validate_question(file: str, q: Question, text: str) -> None:
    rec = q.id
    check_id(file, q.id, "question")
    check_text(file, rec, "stem", q.stem, "stem")
    if not isinstance(q.alternatives, list) or not all(isinstance(a, str) for a in q.alternatives):
        raise InputError(file, rec, "alternatives", "alternatives must be a list of texts")
    for i, a in enumerate(q.alternatives):
        check_text(file, rec, f"alternatives[{i}]", a, "an alternative")
    if len(q.alternatives) < 2:
        raise InputError(file, rec, "alternatives", f"{len(q.alternatives)} alternative(s); at least 2 needed")
    if q.key is not None and (not isinstance(q.key, int) or isinstance(q.key, bool)
                              or not 0 <= q.key < len(q.alternatives)):
        raise InputError(file, rec, "key", f"key {q.key!r} is not one of the {len(q.alternatives)} alternatives")
    if q.answerability is not None and q.answerability not in ANSWERABILITY:
        raise InputError(file, rec, "answerability", f"unknown answerability {q.answerability!r}")
    n = len(text)
    for s in q.spans:
        if s.role not in ROLES:
            raise InputError(file, rec, "span.role", f"unknown span role {s.role!r}")
        if s.origin not in ORIGINS:
            raise InputError(file, rec, "span.origin", f"unknown span origin {s.origin!r}")
        if not (isinstance(s.start, int) and isinstance(s.end, int) and 0 <= s.start <= s.end <= n):
            raise InputError(file, rec, f"{s.role} span",
                             f"offsets {s.start}..{s.end} outside the passage (length {n})")
        if s.role == BASIS and s.alternative is not None and not 0 <= s.alternative < len(q.alternatives):
            raise InputError(file, rec, "basis", f"basis of alternative {s.alternative} that does not exist")
    for p in q.problems:
        if p.start is not None and p.end is not None and not (0 <= p.start <= p.end <= n):
            raise InputError(file, rec, "problem", f"offsets {p.start}..{p.end} outside the passage")
    for pr in q.predictions:
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in pr.probabilities):
            raise InputError(file, rec, "probabilities", "probabilities must be finite numbers")
