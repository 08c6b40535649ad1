"""The Store's model outputs: predictions (probabilities, evidence) and give-away words.

Derived data: a newer output for the same item, model and format (or variant) replaces
the older, and one history row of kind "predictions" says how many were stored.
A part of `Store` (`store.model_outputs`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from desktop.domain.errors import StoreError
from desktop.domain.model import Prediction

from . import imports
from .connection import Connection
from .decode import loads, prediction_row
from .history import History


def _refuse_unknown(conn, what: str, item_ids: set) -> None:
    """StoreError naming up to five of `item_ids` that are no question of the database.  Looks up
    only these ids: the window stores one item's rows at a time, and reading every question id
    for it costs a scan of all of RACE (97,687 ids) per scored item."""
    found = {r[0] for r in conn.execute("SELECT id FROM questions WHERE id IN (SELECT value FROM json_each(?))",
                                        (imports.dumps(sorted(map(str, item_ids))),))}
    unknown = sorted(set(map(str, item_ids)) - found)
    if unknown:
        raise StoreError(f"{what} for unknown item(s): {', '.join(unknown[:5])}")


class ModelOutputs:
    """Predictions and explanations; `annotator()` (the store's of the moment) signs their history rows."""

    def __init__(self, connection: Connection, audit: History, annotator: Callable[[], str]):
        self._c, self._audit, self._annotator = connection, audit, annotator

    def add_predictions(self, rows: Iterable[tuple[str, Prediction]] | Iterable[dict]) -> int:
        """Store model outputs: (item_id, Prediction) pairs or dicts with item, model_id,
        input_format, probabilities, evidence?, extra?.  One transaction; a newer output
        for the same (item, model, input format) replaces the older.  Returns the count."""
        ts = imports.now()
        values = []
        for row in rows:
            if isinstance(row, dict):
                item = row.get("item") or row.get("item_id") or row.get("question_id")
                pred = Prediction(model_id=row["model_id"], input_format=row.get("input_format", "standard"),
                                  probabilities=list(row.get("probabilities") or []), evidence=row.get("evidence"),
                                  extra=row.get("extra") or {})
            else:
                item, pred = row
            values.append((item, pred.model_id, pred.input_format, imports.dumps([float(x) for x in pred.probabilities]),
                           pred.evidence, imports.dumps(pred.extra), ts))
        if not values:
            return 0
        with self._c.transaction() as conn:
            _refuse_unknown(conn, "predictions", {v[0] for v in values})
            conn.executemany(
                "INSERT INTO predictions (question_id, model_id, input_format, probabilities, evidence, extra, "
                "created_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT (question_id, model_id, input_format) DO UPDATE SET "
                "probabilities=excluded.probabilities, evidence=excluded.evidence, extra=excluded.extra, "
                "created_at=excluded.created_at", values)
            models = sorted({v[1] for v in values})
            self._audit.record(conn, self._annotator(), None, "predictions", None, {"models": models, "rows": len(values)},
                          kind="predictions")
        return len(values)

    def scoring_plan(self, model_id: str, formats: list[str],
                     item_ids: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
        """(the items, in import order; those of them lacking a row of `model_id` in one of
        `formats`, or whose standard row still waits for its evidence): what Score all has
        to do, in one query."""
        sql = ("SELECT q.id, (SELECT count(*) FROM predictions p WHERE p.question_id = q.id AND p.model_id = ? "
               "AND p.input_format IN (SELECT value FROM json_each(?)) "
               "AND coalesce(json_extract(p.extra, '$.evidence_pending'), 0) = 0) FROM questions q")
        params: list[Any] = [model_id, imports.dumps(list(formats))]
        if item_ids is not None:
            sql += " WHERE q.id IN (SELECT value FROM json_each(?))"; params.append(imports.dumps(list(item_ids)))
        rows = self._c.query(sql + " ORDER BY q.dataset_id, q.position", params)
        return [r[0] for r in rows], [r[0] for r in rows if r[1] < len(formats)]

    def scored_rowids(self, rowids: Iterable[int], model_id: str | None = None) -> set[int]:
        """Which of these question rowids have stored probabilities (of `model_id`): the
        navigator's mark."""
        sql = ("SELECT q.rowid FROM questions q WHERE q.rowid IN (SELECT value FROM json_each(?)) AND EXISTS "
               "(SELECT 1 FROM predictions p WHERE p.question_id = q.id" + (" AND p.model_id = ?)" if model_id else ")"))
        params: list[Any] = [imports.dumps([int(r) for r in rowids])] + ([model_id] if model_id else [])
        return {r[0] for r in self._c.query(sql, params)}

    def predicted_items(self, with_evidence: bool = False) -> list[str]:
        """Items with stored model output (with an evidence sentence, if asked), in import order."""
        cond = " AND evidence IS NOT NULL AND evidence != ''" if with_evidence else ""
        return [r[0] for r in self._c.query(
            "SELECT q.id FROM questions q WHERE q.id IN (SELECT question_id FROM predictions WHERE 1" + cond + ") "
            "ORDER BY q.dataset_id, q.position")]

    def predictions(self, item_id: str, model_id: str | None = None) -> list[Prediction]:
        sql = "SELECT * FROM predictions WHERE question_id=?"
        params: list[Any] = [item_id]
        if model_id:
            sql += " AND model_id=?"; params.append(model_id)
        return [prediction_row(r) for r in self._c.query(sql + " ORDER BY id", params)]

    # ------------------------------------------------------------ give-away words

    def add_explanations(self, rows: Iterable[dict]) -> int:
        """Store the shortcut model's give-away words (`inference.giveaway.Explanation.to_json()`
        dicts: item_id, model_id, variant, fingerprint, ...), one transaction; a newer one for the
        same (item, model, variant) replaces the older.  Derived data, like predictions: one
        history row of kind "predictions" says how many were stored.  Returns the count."""
        ts = imports.now()
        values = [(r["item_id"], r["model_id"], r.get("variant") or r["method"], r["fingerprint"], imports.dumps(r), ts)
                  for r in rows]
        if not values:
            return 0
        with self._c.transaction() as conn:
            _refuse_unknown(conn, "explanations", {v[0] for v in values})
            conn.executemany(
                "INSERT INTO explanations (question_id, model_id, method, fingerprint, result, created_at) "
                "VALUES (?,?,?,?,?,?) ON CONFLICT (question_id, model_id, method) DO UPDATE SET "
                "fingerprint=excluded.fingerprint, result=excluded.result, created_at=excluded.created_at", values)
            self._audit.record(conn, self._annotator(), None, "explanations", None,
                          {"models": sorted({v[1] for v in values}), "rows": len(values)}, kind="predictions")
        return len(values)

    def explanation(self, item_id: str, model_id: str, variant: str) -> dict | None:
        """The stored give-away words of one item for a model and variant (as `add_explanations`
        got them), or None."""
        rows = self._c.query("SELECT question_id, result FROM explanations WHERE question_id=? AND model_id=? "
                             "AND method=?", (item_id, model_id, variant))
        return loads(rows[0]["result"], "explanations", "result", item_id, dict) if rows else None

    def explanations(self, model_id: str | None = None, variant: str | None = None,
                     item_ids: Iterable[str] | None = None) -> list[dict]:
        """Every stored explanation (of `model_id`, of `variant`, of `item_ids`), in import order
        of the items."""
        sql = ("SELECT e.question_id, e.result FROM explanations e JOIN questions q ON q.id = e.question_id "
               "WHERE 1")
        params: list[Any] = []
        if item_ids is not None:
            sql += " AND e.question_id IN (SELECT value FROM json_each(?))"; params.append(imports.dumps(list(item_ids)))
        if model_id:
            sql += " AND e.model_id=?"; params.append(model_id)
        if variant:
            sql += " AND e.method=?"; params.append(variant)
        return [loads(r["result"], "explanations", "result", r["question_id"], dict)
                for r in self._c.query(sql + " ORDER BY q.dataset_id, q.position, e.model_id, e.method", params)]

    def shortcut_predictions(self, source: str | None = None) -> list[tuple[str, str, int | None, list[float], dict]]:
        """(item id, model id, key, probabilities, extra) of every stored shortcut (Q+{O})
        prediction (of `source`), in import order: what the report's give-away page counts."""
        sql = ("SELECT p.id, p.question_id, p.model_id, q.key, p.probabilities, p.extra FROM predictions p "
               "JOIN questions q ON q.id = p.question_id WHERE p.input_format = 'shortcut'")
        params: list[Any] = []
        if source:
            sql += " AND q.source=?"; params.append(source)
        return [(r["question_id"], r["model_id"], r["key"],
                 loads(r["probabilities"], "predictions", "probabilities", r["id"], list),
                 loads(r["extra"], "predictions", "extra", r["id"], dict))
                for r in self._c.query(sql + " ORDER BY q.dataset_id, q.position", params)]
