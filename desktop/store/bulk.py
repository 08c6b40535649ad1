"""Whole-corpus reads for the reports: one query per table, rows as pandas frames.

The corpus report and the agreement report look at every item; building a `Question`
object per item (`Store.load_datasets`) costs seconds on all of RACE and most items
there carry no annotation at all.  These queries hand the reports flat tables instead,
in the order `load_datasets` gives (file, then passage, then question).

Time on item is derived here from the history (see `time_on_item`).
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from desktop.domain.time_on_item import IDLE_LIMIT_S

from .connection import Connection, translate
from .lint_facts import fresh_sql, rules_version

_EDIT_KINDS = ("change", "undo", "redo")


def _rows(c: Connection, sql: str, params=()) -> list[tuple]:
    with c.lock:
        try:
            return c.conn.execute(sql, params).fetchall()
        except (sqlite3.Error, OSError) as exc:
            raise translate(exc, c.path) from exc


def _frame(c: Connection, sql: str, params, columns: list[str]):
    import pandas as pd
    return pd.DataFrame.from_records(_rows(c, sql, params), columns=columns)


def _filters(source: str | None, annotator: str | None, alias: str = "t") -> tuple[str, list]:
    """SQL conditions on an annotation table `alias` joined with questions `q` and datasets `d`."""
    where, params = [], []
    if source:
        where.append("d.source = ?"); params.append(source)
    if annotator is not None:
        where.append(f"({alias}.origin = 'imported' OR {alias}.annotator = ?)"); params.append(annotator)
    return ("WHERE " + " AND ".join(where)) if where else "", params


def items(c: Connection, source: str | None = None):
    """One row per question: item_id, passage_id, dataset_id, source, file (the file name the
    dataset was read from, as `Dataset.extra["file"]`), stem, alternatives (list), status."""
    where, params = _filters(source, None)
    frame = _frame(c, (
        "SELECT q.id, q.passage_id, q.dataset_id, q.source, coalesce(json_extract(d.extra, '$.file'), ''), "
        "q.stem, q.alternatives, q.status FROM questions q JOIN datasets d ON d.id = q.dataset_id "
        "JOIN dataset_passages dp ON dp.dataset_id = q.dataset_id AND dp.passage_id = q.passage_id "
        f"{where} ORDER BY q.dataset_id, dp.position, q.position"), params,
        ["item_id", "passage_id", "dataset_id", "source", "file", "stem", "alternatives", "status"])
    frame["alternatives"] = [json.loads(a) for a in frame["alternatives"]]
    return frame


def passage_texts(c: Connection, source: str | None = None) -> dict[str, str]:
    """{passage id: text} of the passages that have questions (of `source`'s datasets)."""
    where, params = _filters(source, None)
    return dict(_rows(c, "SELECT p.id, p.text FROM passages p WHERE p.id IN (SELECT q.passage_id FROM "
                         f"questions q JOIN datasets d ON d.id = q.dataset_id {where})", params))


def stored_lint(c: Connection, source: str | None = None) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The linter's stored suggestions ({question id: JSON}, {passage id: JSON}, see
    `lint_facts`) of `source`'s items and their passages; None where they were not found
    by the current rules (to be computed by the reader)."""
    where, params = _filters(source, None)
    version = rules_version()
    items = dict(_rows(c, f"SELECT q.id, {fresh_sql('q')} FROM questions q JOIN datasets d ON d.id = q.dataset_id "
                          f"{where}", [version, *params]))
    passages = dict(_rows(c, f"SELECT p.id, {fresh_sql('p')} FROM passages p WHERE p.id IN (SELECT q.passage_id "
                             f"FROM questions q JOIN datasets d ON d.id = q.dataset_id {where})", [version, *params]))
    return items, passages


def assessments(c: Connection, source: str | None = None, annotator: str | None = None):
    """Every assessment, oldest first: item_id, annotator, origin, values (dict), text_format,
    multiple_texts (bool or None), unit_type."""
    where, params = _filters(source, annotator)
    frame = _frame(c, (
        'SELECT t.question_id, t.annotator, t.origin, t."values", t.text_format, t.multiple_texts, t.unit_type '
        "FROM assessments t JOIN questions q ON q.id = t.question_id JOIN datasets d ON d.id = q.dataset_id "
        f"{where} ORDER BY t.id"), params,
        ["item_id", "annotator", "origin", "values", "text_format", "multiple_texts", "unit_type"])
    frame["values"] = [json.loads(v) for v in frame["values"]]
    frame["multiple_texts"] = [None if m is None else bool(m) for m in frame["multiple_texts"]]
    return frame


def problems(c: Connection, source: str | None = None, annotator: str | None = None):
    """Every problem tag, in stored order: item_id, type, element, annotator, origin, note,
    alternative, start, end."""
    where, params = _filters(source, annotator)
    return _frame(c, (
        'SELECT t.question_id, t.type, t.element, t.annotator, t.origin, t.note, t.alternative, t.start, t."end" '
        "FROM problems t JOIN questions q ON q.id = t.question_id JOIN datasets d ON d.id = q.dataset_id "
        f"{where} ORDER BY t.id"), params,
        ["item_id", "type", "element", "annotator", "origin", "note", "alternative", "start", "end"])


def spans(c: Connection, role: str, source: str | None = None, annotator: str | None = None):
    """Every span of one role, in stored order: item_id, alternative, start, end, annotator, origin."""
    where, params = _filters(source, annotator)
    where = (where + " AND" if where else "WHERE") + " t.role = ?"
    return _frame(c, (
        'SELECT t.question_id, t.alternative, t.start, t."end", t.annotator, t.origin FROM spans t '
        f"JOIN questions q ON q.id = t.question_id JOIN datasets d ON d.id = q.dataset_id {where} "
        "ORDER BY t.id"), params + [role],
        ["item_id", "alternative", "start", "end", "annotator", "origin"])


@dataclass
class TimeOnItem:
    """How long one annotator worked on one item, from the history's timestamps."""

    item_id: str
    annotator: str
    seconds: float
    edits: int
    first: str
    last: str


def time_on_item(c: Connection, annotator: str | None = None, item_id: str | None = None,
                 idle_limit: float = IDLE_LIMIT_S) -> list[TimeOnItem]:
    """Time on item per (item, annotator), by `desktop.domain.time_on_item`'s rule: the sum
    of the gaps between the annotator's consecutive edits of the item (changes, undos,
    redos, in history order), each gap counted up to `idle_limit` seconds."""
    where = [f"kind IN ({', '.join('?' * len(_EDIT_KINDS))})", "item IS NOT NULL"]
    params: list = list(_EDIT_KINDS)
    if annotator is not None:
        where.append("annotator = ?"); params.append(annotator)
    if item_id is not None:
        where.append("item = ?"); params.append(item_id)
    rows = _rows(c, (
        "SELECT item, annotator, coalesce(sum(min(max(gap, 0.0), ?)), 0.0), count(*), min(ts), max(ts) FROM ("
        "SELECT item, annotator, ts, (julianday(ts) - julianday(lag(ts) OVER (PARTITION BY annotator, item "
        "ORDER BY id))) * 86400.0 AS gap FROM history WHERE " + " AND ".join(where) + ") "
        "GROUP BY item, annotator ORDER BY item, annotator"), [idle_limit, *params])
    return [TimeOnItem(item_id=r[0], annotator=r[1], seconds=round(r[2], 3), edits=r[3], first=r[4], last=r[5])
            for r in rows]


def rated_items_sql(source: str | None = None) -> tuple[str, list]:
    """SQL (and its parameters) for the ids of the items two or more raters annotated, or
    that keep an ExpMRC reference that could not be located (a rater of its own): the only
    items agreement can be measured on.  Raters as `reports.agreement_measures` counts
    them: not "gold", not a model suggestion nobody accepted."""
    where, params = _filters(source, None)
    sql = (
        "SELECT q.id FROM questions q JOIN datasets d ON d.id = q.dataset_id "
        + (where + " AND " if where else "WHERE ")
        + "(q.id IN (SELECT question_id FROM ("
        "SELECT question_id, annotator FROM spans WHERE role IN ('evidence', 'basis') AND annotator != 'gold' "
        "AND origin != 'model' "
        "UNION SELECT question_id, annotator FROM assessments WHERE annotator != 'gold' "
        "UNION SELECT question_id, annotator FROM problems WHERE annotator != 'gold' AND origin != 'model'"
        ") GROUP BY question_id HAVING count(*) >= 2) "
        "OR json_extract(q.extra, '$.unlocated_evidence') IS NOT NULL)")
    return sql, params
