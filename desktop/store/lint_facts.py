"""The surface linter's suggestions, stored with the passages and questions they were found in.

The corpus report lists the linter's suggestions of every item and counts them into
"acceptability with suggestions"; running the linter over all of RACE (97,687
questions, 27,933 passages) was two thirds of the report's time.  A passage's text and
a question's stem and alternatives never change after import, so their suggestions are
found once, when they are imported, and stored beside them (`lint`, a JSON list of
[element, type, note, alternative, start, end]) with `lint_version`: a fingerprint of
the rules (the source of `desktop.domain`, where the linter and the typology live).
Rows found by other rules, or imported before this column existed, are NULL to the
reader (`fresh_*`), and the report runs the linter on those itself.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources

from desktop.domain import surface_lint

from .json_text import dumps


@lru_cache(maxsize=1)
def rules_version() -> str:
    """A fingerprint of the linter's rules: the bytes of every module of `desktop.domain`."""
    h = hashlib.sha256()
    for f in sorted(resources.files("desktop.domain").iterdir(), key=lambda f: f.name):
        if f.name.endswith(".py"):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def encode(tags) -> str:
    if not tags:  # most strings: no suggestion
        return "[]"
    return dumps([[t.element, t.type, t.note, t.alternative, t.start, t.end] for t in tags])


def decode(text: str) -> list[list]:
    """[element, type, note, alternative, start, end] per suggestion, in the linter's order."""
    return [] if text == "[]" else json.loads(text)


class _Question:
    __slots__ = ("stem", "alternatives")

    def __init__(self, stem: str, alternatives: list[str]):
        self.stem, self.alternatives = stem, alternatives


def passage_lints(texts: list[str]) -> list[str]:
    """The stored suggestions (`encode`d) of passage texts, in their order."""
    return [encode(surface_lint.detect_text(text)) for text in texts]


def question_lints(items: list[tuple[str, list[str], str]]) -> list[str]:
    """The stored suggestions (`encode`d) of questions (stem, alternatives, passage text), in
    their order.

    They are found in the order of their stems and alternatives: the linter keeps the matches
    of its last few thousand strings (`surface_scan.found`), and a corpus repeats stems and
    alternatives ("What is the best title?", "All of the above") far apart in file order, which
    that cache forgets before they come back.  Side by side they are found once (RACE's items
    repeated, as benchmarks/make_big_race.py writes them: 9.6 -> 6 s a 100,000 questions)."""
    out: list[str] = [""] * len(items)
    for i in sorted(range(len(items)), key=lambda i: (items[i][0], items[i][1])):
        stem, alternatives, text = items[i]
        out[i] = encode(surface_lint.detect_item(_Question(stem, alternatives), text))
    return out


def with_lint(rows: list[tuple], lints: list[str]) -> list[tuple]:
    """Rows with the linter's suggestions and the rules' fingerprint as their last two columns:
    stored with the row, never by an UPDATE after it (desktop/store/lint_facts.py)."""
    version = rules_version()
    return [(*row, lint, version) for row, lint in zip(rows, lints)]


def fresh_sql(table_alias: str) -> str:
    """The column expression that reads `lint` only where the current rules found it."""
    return f"CASE WHEN {table_alias}.lint_version = ? THEN {table_alias}.lint END"
