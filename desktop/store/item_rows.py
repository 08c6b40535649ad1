"""The navigator's light rows (`ItemRow`) of the questions a condition lets through, one query:
counts of evidence, bases and problems, the annotator's and the gold layer's status, how many
finished it.  Read by `store.items` and the navigator (`navigation.Navigation.rows`)."""
from __future__ import annotations

from .rows import ItemRow

GOLD = "gold"  # the adjudicated layer (desktop.domain.agreement.GOLD; the store imports no domain logic here)

ROWS_SQL = (
    "SELECT q.rowid, q.id, q.passage_id, q.source, q.idx, q.stem, coalesce(me.status, 'untouched'), "
    "(SELECT count(*) FROM spans s WHERE s.question_id = q.id AND s.role = 'evidence'), "
    "(SELECT count(*) FROM spans s WHERE s.question_id = q.id AND s.role = 'basis'), "
    "(SELECT count(*) FROM problems pr WHERE pr.question_id = q.id), "
    "EXISTS (SELECT 1 FROM assessments a WHERE a.question_id = q.id), "
    "(SELECT label FROM answerability an WHERE an.question_id = q.id ORDER BY an.ts DESC LIMIT 1), "
    "coalesce(g.status, 'untouched'), "
    "(SELECT count(*) FROM item_status d WHERE d.question_id = q.id AND d.status = 'done' AND d.annotator != ?) "
    "FROM questions q "
    "LEFT JOIN item_status me ON me.question_id = q.id AND me.annotator = ? "
    "LEFT JOIN item_status g ON g.question_id = q.id AND g.annotator = ? ")


def item_rows(conn, annotator: str, where: list[str], params: list, order: bool = True) -> list[ItemRow]:
    """ItemRows of the questions passing `where` (over q and me), in import order."""
    sql = ROWS_SQL + ("WHERE " + " AND ".join(where) if where else "")
    if order:
        sql += " ORDER BY q.dataset_id, q.position"
    return [item_row(r) for r in conn.query(sql, [GOLD, annotator, GOLD, *params])]


def item_row(r) -> ItemRow:
    return ItemRow(item_id=r[1], passage_id=r[2], source=r[3], index=r[4], stem=r[5], status=r[6],
                   n_evidence=r[7], n_bases=r[8], n_problems=r[9], has_assessment=bool(r[10]),
                   answerability=r[11], gold_status=r[12], n_done=r[13], rowid=r[0])
