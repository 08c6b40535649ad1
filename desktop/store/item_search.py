"""Finding items by text: the item id, or a stem, alternative or passage containing it (SQLite
FTS5 finds the candidates by their words, an exact case-insensitive substring test decides).
Read by `store.items(search=...)` and the navigator's search box."""
from __future__ import annotations

import json
import re

_WORD = re.compile(r"\w+", re.UNICODE)


def fts_phrase(text: str) -> str | None:
    """The FTS5 query for `text`: its words as one phrase, the last word as a prefix
    ("volunteer" finds "volunteers"); None when it has no word."""
    words = _WORD.findall(text)
    if not words:
        return None
    return '"' + " ".join(words) + '" *'


def search_rowids(text: str) -> tuple[str, list]:
    """A SELECT of the rowids of the questions `text` finds: the item id is `text`, or its
    stem, alternatives or passage contain it.

    FTS5 finds the candidates by their words (the text's words in a row, each from the start
    of a word, the last one possibly unfinished); `instr` on the lower-cased text keeps
    those that contain `text` exactly (punctuation included).  Three indexed parts joined by
    UNION: one pass over every question with OR between them would read the whole bank."""
    needle = text.strip()
    low = needle.lower()
    in_json = json.dumps(low, ensure_ascii=False)[1:-1]  # alternatives are stored as JSON
    phrase = fts_phrase(needle)
    if phrase is None:  # punctuation only: no word for the index, a scan of the texts
        return ("SELECT q.rowid FROM questions q WHERE q.id = ? OR instr(lower(q.stem), ?) "
                "OR instr(lower(q.alternatives), ?) "
                "OR q.passage_id IN (SELECT id FROM passages WHERE instr(lower(text), ?))",
                [needle, low, in_json, low])
    sql = ("SELECT rowid FROM questions WHERE id = ? "
           "UNION SELECT q.rowid FROM questions q WHERE q.rowid IN "
           "(SELECT rowid FROM questions_fts WHERE questions_fts MATCH ?) "
           "AND (instr(lower(q.stem), ?) OR instr(lower(q.alternatives), ?)) "
           "UNION SELECT q.rowid FROM questions q WHERE q.passage_id IN (SELECT p2.id FROM passages p2 "
           "WHERE p2.rowid IN (SELECT rowid FROM passages_fts WHERE passages_fts MATCH ?) "
           "AND instr(lower(p2.text), ?))")
    return sql, [needle, phrase, low, in_json, phrase, low]


def search_where(text: str) -> tuple[str, list]:
    """SQL over q: the questions `text` finds (see `search_rowids`)."""
    sql, params = search_rowids(text)
    return f"q.rowid IN ({sql})", params
