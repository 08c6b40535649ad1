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
    return json.dumps([[t.element, t.type, t.note, t.alternative, t.start, t.end] for t in tags],
                      ensure_ascii=False, separators=(",", ":"))


def decode(text: str) -> list[list]:
    """[element, type, note, alternative, start, end] per suggestion, in the linter's order."""
    return [] if text == "[]" else json.loads(text)


class _Question:
    __slots__ = ("stem", "alternatives")

    def __init__(self, stem: str, alternatives: list[str]):
        self.stem, self.alternatives = stem, alternatives


def store_new(conn, passages: list[tuple], questions: list[tuple[str, str, list[str], str]]) -> None:
    """Lint and store the passages (id, text) and questions (id, stem, alternatives, passage
    text) an import has just inserted (the caller holds the transaction)."""
    version = rules_version()
    conn.executemany("UPDATE passages SET lint = ?, lint_version = ? WHERE id = ?",
                     [(encode(surface_lint.detect_text(text)), version, pid) for pid, text in passages])
    conn.executemany("UPDATE questions SET lint = ?, lint_version = ? WHERE id = ?",
                     [(encode(surface_lint.detect_item(_Question(stem, alts), text)), version, qid)
                      for qid, stem, alts, text in questions])


def fresh_sql(table_alias: str) -> str:
    """The column expression that reads `lint` only where the current rules found it."""
    return f"CASE WHEN {table_alias}.lint_version = ? THEN {table_alias}.lint END"
