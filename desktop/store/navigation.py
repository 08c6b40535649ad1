"""The navigator's queries: pages of items in order, rows for what is on screen, counts.

The window never holds every item.  It asks for the next page of (question rowid,
passage rowid) pairs after a cursor (keyset pagination, so an edit that moves an item
out of a filter never shifts the pages after it), for the rows of the handful of items
on screen, and for aggregates (progress, a passage's done count) that SQLite counts.

Order: passages in the order they were first imported (`passages.rowid`), each
passage's questions in import order (`questions_passage_order`); or, after the model
panel asks for it, by shortcut N / MI (a passage goes where its lowest item goes) from a
temporary sort table.

Per-item facts (acceptability, eligibility, difficulty total, shortcut N, MI, model
flags) live in TEMP tables of this connection: the window computes them once, in a
worker, for the items that carry annotations or predictions only, and refreshes the rows
of the items an edit touches; an item without a row has the facts of an unannotated item
(`Navigation.defaults`).  TEMP tables never touch the database file.

Filters are SQL fragments over the aliases `q` (questions), `p` (passages), `me` (this
annotator's `item_status` row) and `f` (the facts); see `item_filters`.
"""
from __future__ import annotations

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import item_filters
from .item_rows import GOLD, item_rows
from .item_search import search_rowids
from .rows import ItemRow

_INF = 1e308
SPARSE = 3000  # a query letting at most this many items through is planned from its filter

# ---------------------------------------------------------------- the navigator's query

IDS_PREFIX = "ids:"  # ItemQuery.filters names for id sets that no combo box shows


@dataclass
class ItemQuery:
    """What the navigator shows: active filters (name -> chosen value), search text, order."""

    annotator: str
    filters: dict[str, str] = field(default_factory=dict)
    search: str = ""
    order: str = "import"  # "import" | "shortcut_n" | "mi_bits"

    def key(self) -> tuple:
        return (self.annotator, tuple(sorted(self.filters.items())), self.search, self.order)


@dataclass
class PassageRow:
    rowid: int
    passage_id: str
    source: str
    split: str | None
    n_questions: int
    n_done: int  # questions of the passage this annotator has done


class Navigation:
    """The navigator's reads on one store connection (and its TEMP fact tables)."""

    def __init__(self, connection, defaults: dict[str, Any] | None = None):
        self._c = connection
        # facts of an item without annotations or predictions (no row in temp.item_facts)
        self.defaults = dict(defaults or {"acceptability": None, "eligible": None, "total": None})
        with self._temp_writes():
            for sql in (
                    "CREATE TEMP TABLE IF NOT EXISTS item_facts (qrowid INTEGER PRIMARY KEY, acceptability TEXT, "
                    "eligible INTEGER, total REAL, shortcut_n REAL, mi_bits REAL)",
                    "CREATE TEMP TABLE IF NOT EXISTS item_flags (flag TEXT NOT NULL, qrowid INTEGER NOT NULL, "
                    "PRIMARY KEY (flag, qrowid)) WITHOUT ROWID",
                    "CREATE TEMP TABLE IF NOT EXISTS nav_sort (qrowid INTEGER PRIMARY KEY, k1 REAL, k2 REAL)",
                    "CREATE TEMP TABLE IF NOT EXISTS filter_ids (name TEXT NOT NULL, qrowid INTEGER NOT NULL, "
                    "PRIMARY KEY (name, qrowid)) WITHOUT ROWID",
                    "CREATE TEMP TABLE IF NOT EXISTS search_hits (text TEXT NOT NULL, qrowid INTEGER NOT NULL, "
                    "PRIMARY KEY (text, qrowid)) WITHOUT ROWID"):
                self._c.conn.execute(sql)
        self._sorted_by: str | None = None
        self.annotator = ""
        self._searched: set[str] = set()
        self._sizes: dict[tuple, int] = {}  # query -> how many items it lets through (plan choice)


    @contextmanager
    def _temp_writes(self):
        """The store's lock, and writes to this connection's TEMP tables allowed: a store opened
        read-only through `PRAGMA query_only` (desktop/store/connection.py) refuses even those,
        though they never touch the database file."""
        with self._c.lock:
            conn = self._c.conn
            locked = conn.execute("PRAGMA query_only").fetchone()[0]
            if locked:
                conn.execute("PRAGMA query_only = OFF")
            try:
                yield
            finally:
                if locked:
                    conn.execute("PRAGMA query_only = ON")

    def invalidate(self) -> None:
        """Items were imported: search hits and query sizes are read again."""
        self._searched.clear()
        self._sizes.clear()

    # ---- facts ---------------------------------------------------------------------------------
    def annotated_items(self) -> list[str]:
        """Items whose facts differ from an unannotated item's: assessments, problems, predictions."""
        return [r[0] for r in self._c.query(
            "SELECT question_id FROM assessments UNION SELECT question_id FROM problems "
            "UNION SELECT question_id FROM predictions")]

    def put_facts(self, facts: dict[str, dict[str, Any]]) -> None:
        """Store computed facts ({item id: {acceptability, eligible, total, shortcut_n, mi_bits,
        model_flags}}) for the filters; replaces those items' previous facts."""
        if not facts:
            return
        ids = list(facts)
        rowids = dict(self._c.query("SELECT id, rowid FROM questions WHERE id IN (SELECT value FROM json_each(?))",
                                    [json.dumps(ids)]))
        rows, flags = [], []
        for item, f in facts.items():
            rid = rowids.get(item)
            if rid is None:
                continue
            eligible = f.get("eligible")
            rows.append((rid, f.get("acceptability"), None if eligible is None else int(bool(eligible)),
                         f.get("total"), f.get("shortcut_n"), f.get("mi_bits")))
            flags += [(flag, rid) for flag in f.get("model_flags", ())]
        with self._temp_writes():
            conn = self._c.conn
            conn.executemany("DELETE FROM temp.item_flags WHERE qrowid = ?", [(r[0],) for r in rows])
            conn.executemany("INSERT OR REPLACE INTO temp.item_facts VALUES (?,?,?,?,?,?)", rows)
            conn.executemany("INSERT OR IGNORE INTO temp.item_flags VALUES (?,?)", flags)
        self._sorted_by = None  # model order must be recomputed
        self._sizes.clear()

    def n_facts(self) -> int:
        return self._c.query("SELECT count(*) FROM temp.item_facts")[0][0]

    def facts(self, item_id: str) -> dict[str, Any]:
        """The stored facts of one item (the defaults where none are stored)."""
        r = self._c.query("SELECT f.acceptability, f.eligible, f.total, f.shortcut_n, f.mi_bits, "
                          "(SELECT json_group_array(flag) FROM temp.item_flags WHERE qrowid = q.rowid) "
                          "FROM questions q LEFT JOIN temp.item_facts f ON f.qrowid = q.rowid WHERE q.id = ?",
                          [item_id])
        if not r or (r[0][0] is None and r[0][2] is None and r[0][3] is None and r[0][1] is None):
            return dict(self.defaults, model_flags=[])
        a, e, t, n, mi, fl = r[0]
        return {"acceptability": a, "eligible": None if e is None else bool(e), "total": t,
                "shortcut_n": n, "mi_bits": mi, "model_flags": json.loads(fl or "[]")}

    def flags(self) -> list[str]:
        return [r[0] for r in self._c.query("SELECT DISTINCT flag FROM temp.item_flags ORDER BY flag")]

    def put_filter_ids(self, name: str, item_ids: Iterable[str]) -> None:
        """The items a Python-computed filter lets through (see item_filters.IdsFilter)."""
        with self._temp_writes():
            conn = self._c.conn
            conn.execute("DELETE FROM temp.filter_ids WHERE name = ?", (name,))
            conn.execute("INSERT OR IGNORE INTO temp.filter_ids SELECT ?, rowid FROM questions "
                         "WHERE id IN (SELECT value FROM json_each(?))", (name, json.dumps(list(item_ids))))

    # ---- the filtered, ordered list ------------------------------------------------------------
    def _where(self, query: ItemQuery) -> tuple[str, list]:
        self.annotator = query.annotator  # filters about "another annotator" read it
        clauses, params = [], []
        for name, value in query.filters.items():
            if name.startswith(IDS_PREFIX):  # a set of ids the window put (Navigator.set_filter_ids)
                clauses.append("q.rowid IN (SELECT qrowid FROM temp.filter_ids WHERE name = ?)")
                params.append(name)
                continue
            spec = item_filters.FILTERS.get(name)
            if spec is None or value is None:
                continue
            sql, more = spec.sql(value, self)
            clauses.append(sql)
            params += more
        if query.search.strip():
            clauses.append("q.rowid IN (SELECT qrowid FROM temp.search_hits WHERE text = ?)")
            params.append(self._search_hits(query.search.strip()))
        return " AND ".join(clauses), params

    def _search_hits(self, text: str) -> str:
        """The rowids of the items `text` finds, kept in a TEMP table for the pages and counts."""
        if text not in self._searched:
            sql, params = search_rowids(text)
            with self._temp_writes():
                conn = self._c.conn
                conn.execute("DELETE FROM temp.search_hits")
                conn.execute(f"INSERT OR IGNORE INTO temp.search_hits SELECT ?, rowid FROM ({sql})", [text, *params])
            self._searched = {text}
        return text

    def _from(self, query: ItemQuery) -> tuple[str, list]:
        # CROSS JOIN keeps passages as the outer loop: rows come out in order without a sort, and
        # a page stops after its rows.  When a filter lets few items through (counted before),
        # SQLite may start from the filter's index instead and sort those few.
        few = self._sizes.get(query.key(), SPARSE + 1) <= SPARSE
        # (INDEXED BY: with an `IN (...)` filter SQLite would otherwise look each listed item up
        # once per passage.)
        join = "JOIN questions q" if few else "CROSS JOIN questions q INDEXED BY questions_passage_order"
        sql = (f"FROM passages p {join} ON q.passage_id = p.id "
               "LEFT JOIN item_status me ON me.question_id = q.id AND me.annotator = ? "
               "LEFT JOIN temp.item_facts f ON f.qrowid = q.rowid ")
        if query.order != "import":
            sql += "LEFT JOIN temp.nav_sort s ON s.qrowid = q.rowid "
        return sql, [query.annotator]

    def _keys(self, query: ItemQuery) -> list[str]:
        if query.order == "import":
            return ["p.rowid", "q.dataset_id", "q.position"]
        return [f"coalesce(s.k1, {_INF})", "p.rowid", f"coalesce(s.k2, {_INF})", "q.dataset_id", "q.position"]

    def _ensure_sort(self, query: ItemQuery) -> None:
        if query.order == "import" or self._sorted_by == query.order:
            return
        column = {"shortcut_n": "shortcut_n", "mi_bits": "mi_bits"}[query.order]
        with self._temp_writes():
            conn = self._c.conn
            conn.execute("DELETE FROM temp.nav_sort")
            conn.execute(
                f"INSERT INTO temp.nav_sort (qrowid, k1, k2) SELECT q.rowid, m.k1, f.{column} "
                f"FROM temp.item_facts f JOIN questions q ON q.rowid = f.qrowid "
                f"JOIN (SELECT q2.passage_id AS pid, min(f2.{column}) AS k1 FROM temp.item_facts f2 "
                f"JOIN questions q2 ON q2.rowid = f2.qrowid GROUP BY q2.passage_id) m ON m.pid = q.passage_id")
        self._sorted_by = query.order

    def page(self, query: ItemQuery, after: tuple | None, limit: int = 400,
             until: tuple | None = None, extra: str = "", extra_params: list | None = None
             ) -> list[tuple[int, int, tuple]]:
        """The next (question rowid, passage rowid, cursor) triples after cursor `after`
        (None: from the start), at most `limit`, or every one up to cursor `until` inclusive."""
        if after is None and until is None and self._sizes.get(query.key()) == 0:
            # counted just before (the filter changed): nothing passes, no scan of every item for a page
            return []
        self._ensure_sort(query)
        frm, params = self._from(query)
        where, wparams = self._where(query)
        keys = self._keys(query)
        conds = [where] if where else []
        if extra:
            conds.append(extra)
            wparams = wparams + list(extra_params or [])
        tup = "(" + ", ".join(keys) + ")"
        marks = "(" + ", ".join("?" * len(keys)) + ")"
        if after is not None:
            if query.order == "import":
                conds.append("p.rowid >= ?")
                wparams.append(after[0])
            conds.append(f"{tup} > {marks}")
            wparams += list(after)
        if until is not None:
            if query.order == "import":
                conds.append("p.rowid <= ?")
                wparams.append(until[0])
            conds.append(f"{tup} <= {marks}")
            wparams += list(until)
        sql = (f"SELECT q.rowid, p.rowid, {', '.join(keys)} {frm}"
               + (" WHERE " + " AND ".join(conds) if conds else "")
               + f" ORDER BY {', '.join(keys)}")
        if until is None:
            sql += " LIMIT ?"
            wparams.append(limit)
        return [(r[0], r[1], tuple(r[2:])) for r in self._c.query(sql, params + wparams)]

    def cursor_of(self, query: ItemQuery, item_id: str) -> tuple | None:
        """The order key of `item_id` under `query`'s order (whether or not it passes the filters)."""
        self._ensure_sort(query)
        frm, params = self._from(query)
        r = self._c.query(f"SELECT {', '.join(self._keys(query))} {frm} WHERE q.id = ?", params + [item_id])
        return tuple(r[0]) if r else None

    def passes(self, query: ItemQuery, item_id: str) -> bool:
        frm, params = self._from(query)
        where, wparams = self._where(query)
        sql = f"SELECT 1 {frm} WHERE q.id = ?" + (f" AND {where}" if where else "")
        return bool(self._c.query(sql, params + [item_id] + wparams))

    def item_ids(self, query: ItemQuery) -> list[str]:
        """Every item id passing `query`, in its order (tests and whole-list work, not the view)."""
        self._ensure_sort(query)
        frm, params = self._from(query)
        where, wparams = self._where(query)
        sql = f"SELECT q.id {frm}" + (f" WHERE {where}" if where else "") + \
            f" ORDER BY {', '.join(self._keys(query))}"
        return [r[0] for r in self._c.query(sql, params + wparams)]

    def total(self, query: ItemQuery) -> int:
        """How many items pass `query` (the navigator's "N shown"): one count that joins only
        the tables the filters name, not the status sums of `counts`, which on all of RACE
        cost a join per item that this number does not need."""
        where, wparams = self._where(query)
        if not where:
            return self._c.query("SELECT count(*) FROM questions")[0][0]
        frm, params = "FROM questions q ", []
        if re.search(r"\bp\.", where):
            frm += "JOIN passages p ON p.id = q.passage_id "
        if re.search(r"\bme\.", where):
            frm += "LEFT JOIN item_status me ON me.question_id = q.id AND me.annotator = ? "
            params.append(query.annotator)
        if re.search(r"\bf\.", where):
            frm += "LEFT JOIN temp.item_facts f ON f.qrowid = q.rowid "
        n = self._c.query(f"SELECT count(*) {frm} WHERE {where}", params + wparams)[0][0]
        self._sizes[query.key()] = n
        return n

    def counts(self, query: ItemQuery) -> dict[str, int]:
        """{"total", "done", "in progress", "done by anyone"} over the items passing `query`."""
        where, wparams = self._where(query)
        if not where:  # the whole database: two index-only counts, no join over every item
            total = self._c.query("SELECT count(*) FROM questions")[0][0]
            mine = dict(self._c.query("SELECT status, count(*) FROM item_status WHERE annotator = ? "
                                      "GROUP BY status", [query.annotator]))
            anyone = self._c.query("SELECT count(DISTINCT question_id) FROM item_status WHERE status = 'done' "
                                   "AND annotator != ?", [GOLD])[0][0]
            return {"total": total, "done": mine.get("done", 0), "in progress": mine.get("in progress", 0),
                    "done by anyone": anyone}
        # no order to keep: SQLite picks the plan (a filter's index, or one pass over questions)
        frm = ("FROM questions q JOIN passages p ON p.id = q.passage_id "
               "LEFT JOIN item_status me ON me.question_id = q.id AND me.annotator = ? "
               "LEFT JOIN temp.item_facts f ON f.qrowid = q.rowid ")
        r = self._c.query(
            f"SELECT count(*), coalesce(sum(me.status = 'done'), 0), coalesce(sum(me.status = 'in progress'), 0), "
            f"coalesce(sum(q.id IN (SELECT question_id FROM item_status WHERE status = 'done' "
            f"AND annotator != ?)), 0) {frm} WHERE {where}", [GOLD, query.annotator] + wparams)[0]
        self._sizes[query.key()] = r[0]
        return {"total": r[0], "done": r[1], "in progress": r[2], "done by anyone": r[3]}

    # ---- what is on screen -------------------------------------------------------------------------
    def rows(self, annotator: str, rowids: Iterable[int]) -> dict[int, ItemRow]:
        ids = list(rowids)
        if not ids:
            return {}
        found = item_rows(self._c, annotator, ["q.rowid IN (SELECT value FROM json_each(?))"], [json.dumps(ids)],
                          order=False)
        return {r.rowid: r for r in found}

    def passages(self, annotator: str, rowids: Iterable[int]) -> dict[int, PassageRow]:
        ids = list(rowids)
        if not ids:
            return {}
        out = {}
        for r in self._c.query(
                "SELECT p.rowid, p.id, p.source, p.split, "
                "(SELECT count(*) FROM questions q WHERE q.passage_id = p.id), "
                "(SELECT count(*) FROM questions q JOIN item_status me ON me.question_id = q.id "
                " AND me.annotator = ? AND me.status = 'done' WHERE q.passage_id = p.id) "
                "FROM passages p WHERE p.rowid IN (SELECT value FROM json_each(?))", [annotator, json.dumps(ids)]):
            out[r[0]] = PassageRow(*r)
        return out

    def rowid(self, item_id: str) -> int | None:
        r = self._c.query("SELECT rowid FROM questions WHERE id = ?", [item_id])
        return r[0][0] if r else None

    def row(self, annotator: str, item_id: str) -> ItemRow | None:
        found = item_rows(self._c, annotator, ["q.id = ?"], [item_id], order=False)
        return found[0] if found else None

    def choices(self, column: str) -> list[str]:
        """Distinct values of `source` (questions) or `split` (passages), for the filter boxes."""
        table = {"source": "questions", "split": "passages"}.get(column)
        if table is None:
            raise ValueError(column)
        # a loose index scan: one seek per distinct value (questions_source, passages_split)
        return [r[0] for r in self._c.query(
            f"WITH RECURSIVE v(x) AS (SELECT min({column}) FROM {table} UNION ALL "
            f"SELECT (SELECT min({column}) FROM {table} WHERE {column} > v.x) FROM v WHERE v.x IS NOT NULL) "
            "SELECT x FROM v WHERE x IS NOT NULL")]
        raise ValueError(column)

    def first_item(self) -> str | None:
        r = self._c.query("SELECT q.id FROM passages p CROSS JOIN questions q ON q.passage_id = p.id "
                          "ORDER BY p.rowid, q.dataset_id, q.position LIMIT 1")
        return r[0][0] if r else None

    def is_empty(self) -> bool:
        return not self._c.query("SELECT 1 FROM questions LIMIT 1")
