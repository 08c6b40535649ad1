"""What the window reads about one annotator on one item besides the question itself, in one query.

Opening an item in the window needs the annotator's status, note, own comments (as
stored, to tell a stale edit), own answerability label, the item's row version and how
many of its comments were imported.  Asked field by field (and through the adjudication
module's every-annotator reader) that was some twenty statements per move through the
items; here it is one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .connection import Connection

_SQL = """
SELECT
  (SELECT row_version FROM questions WHERE id = :item),
  (SELECT status FROM item_status WHERE question_id = :item AND annotator = :who),
  (SELECT text FROM notes WHERE question_id = :item AND annotator = :who),
  (SELECT json_group_array(text) FROM (SELECT text FROM comments WHERE question_id = :item AND annotator = :who
                                       ORDER BY position, id)),
  (SELECT label FROM answerability WHERE question_id = :item AND annotator = :who),
  (SELECT count(*) FROM comments WHERE question_id = :item AND origin = 'imported')
"""


@dataclass
class OwnView:
    """One annotator's own fields of one item (`row_version` is None for an unknown item)."""

    row_version: int | None
    status: str = "untouched"
    note: str | None = None
    comments: list[str] = field(default_factory=list)
    answerability: str | None = None
    imported_comments: int = 0


def own_view(c: Connection, item_id: str, annotator: str) -> OwnView:
    row = c.query(_SQL, {"item": item_id, "who": annotator})[0]
    return OwnView(row_version=row[0], status=row[1] or "untouched", note=row[2],
                   comments=json.loads(row[3]) if row[3] else [], answerability=row[4],
                   imported_comments=row[5] or 0)
