"""`Store`: the annotation database (SQLite through sqlite-utils) as the rest of the product sees it."""
from __future__ import annotations

import contextlib
import getpass
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from desktop.domain.changes import Change
from desktop.domain.errors import StoreError
from desktop.domain.model import (DEFAULT_ANNOTATOR, IMPORTED, Assessment, Dataset, Passage, Prediction,
                                  ProblemTag, Question, Span)

from . import bulk, conflicts, edits, imports, own_files
from .connection import Connection
from .decode import loads
from .rows import HistoryRow, ImportResult, ItemRow


def default_annotator() -> str:
    """The operating-system user name, so edits are attributed without asking."""
    try:
        return os.environ.get("MCQLENS_ANNOTATOR") or getpass.getuser() or "annotator"
    except Exception:  # getuser fails without a login name (containers)
        return "annotator"


class Store:
    """All reads and writes of annotations.db.

    Every write is one transaction; every edit (`apply`) writes its history row in
    that same transaction.  Safe to share between the GUI thread and one worker
    (calls are serialised by a lock).
    """

    def __init__(self, connection: Connection, annotator: str | None = None):
        self._c = connection
        self.migrated_from = self._c.migrate()
        self.annotator = annotator or default_annotator()

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike, annotator: str | None = None, create: bool = True,
             read_only: bool = False) -> "Store":
        """Open (creating on first use unless `create=False`) the database at `path`;
        upgrades an older schema after writing `<path>.bak-v<N>` next to it.

        `read_only=True` (every command that only reads): the file is opened with SQLite's
        `mode=ro` and never created, migrated or switched to WAL; an older schema is read
        through an upgraded copy in memory.  A file that is not an MCQ Lens database is
        refused (StoreError) before anything is written to it, in either mode."""
        return cls(Connection(os.fspath(path), read_only=read_only, create=create), annotator)

    @classmethod
    def memory(cls, annotator: str | None = None) -> "Store":
        """A private in-memory database (tests, previews)."""
        return cls(Connection(None), annotator)

    @property
    def path(self) -> str:
        return self._c.path

    @property
    def read_only(self) -> bool:
        """Opened for reading only: every write raises StoreError("read-only: ...")."""
        return self._c.read_only

    @property
    def upgraded_in_memory(self) -> bool:
        """An older schema opened read-only: what is read comes from an upgraded copy in memory."""
        return self._c.in_memory_copy

    def close(self) -> None:
        self._c.close()

    def refuse_own_file(self, path: str | os.PathLike, verb: str = "imported") -> None:
        """InputError if reading `path` would open this store's database or its -wal/-shm/-journal
        outside SQLite (a file picked to import or merge); compared by inode, nothing is read."""
        own_files.refuse(path, None if self.path == ":memory:" else self.path, verb)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def db(self):
        """The sqlite-utils Database on the same connection (read-only use by reports)."""
        import sqlite_utils
        return sqlite_utils.Database(self._c.conn)

    # ------------------------------------------------------------ import / load

    def import_datasets(self, datasets: Iterable[Dataset], annotator: str = DEFAULT_ANNOTATOR,
                        file: str | os.PathLike | None = None) -> ImportResult:
        """Store datasets read from `file` in one transaction.

        Idempotent: the same file (same sha256) again adds nothing; questions already
        stored with identical content are skipped; the same id with other content is an
        InputError (file, record, field) and nothing is written.  A dataset of source
        "expmrc-pred" (`extra["predictions"]` = {item id: Prediction}) stores model output.
        """
        return self.import_files([(file, datasets)], annotator)[0]

    def import_files(self, files: Iterable[tuple[str | os.PathLike | None, Iterable[Dataset]]],
                     annotator: str = DEFAULT_ANNOTATOR, progress=None) -> list[ImportResult]:
        """Several (file, datasets) pairs in ONE transaction: one bad file and nothing is stored.

        A folder's datasets each name their own file (`extra["file"]`) and the sha256 of
        the bytes read (`extra["sha256"]`): each is recorded, and skipped when re-imported,
        on its own; the result (and the history row) is one per pair.

        Passages are checked and written `IMPORT_PART` questions at a time, so a dataset whose
        passages are a `formats.Reread` (a file too large to hold) is stored as it is read
        again; `progress(questions)` is called after each part with the questions done so far."""
        results = []
        cache: dict = {}
        tally = _Tally(progress)
        with self._c.transaction() as conn:
            for file, datasets in files:
                datasets = list(datasets)
                name = str(file) if file is not None else None
                total = ImportResult(file=name)
                units = _units(file, datasets, self.path)
                for unit_file, unit_sha, unit in units:
                    r = self._import_one(conn, unit, annotator, unit_file, unit_sha, cache, tally)
                    total.add(r)
                total.already_imported = all(r_ for r_ in total._already) and bool(units)
                total.sha256 = units[0][1] if len(units) == 1 else None
                if total.changed:
                    total.history_id = self._history(
                        conn, annotator, None, "import", None,
                        {"file": name, "sha256": total.sha256, "files": len(units), "passages": total.passages,
                         "questions": total.questions, "spans": total.spans, "predictions": total.predictions},
                        kind="import")
                results.append(total)
        return results

    def _import_one(self, conn, datasets: list[Dataset], annotator: str, file, sha: str | None,
                    cache: dict, tally: "_Tally | None" = None) -> ImportResult:
        name = str(file) if file is not None else None
        result = ImportResult(file=name, sha256=sha)
        if sha is not None and conn.execute("SELECT 1 FROM imports WHERE sha256=? LIMIT 1", (sha,)).fetchone():
            result.already_imported = True
            return result
        predictions = [d for d in datasets if d.source == "expmrc-pred"]
        datasets = [d for d in datasets if d.source != "expmrc-pred"]
        for dataset in datasets:
            rows = imports.DatasetRows(conn, dataset, annotator, name, sha, result)
            for part in _parts(dataset.passages, IMPORT_PART):
                part_set = Dataset(dataset.source, part, dataset.extra)
                plan, ((_, ds_passages, ds_questions),) = imports.plan_import(
                    conn, [part_set], annotator, name or "datasets", cache, positions=rows.positions)
                imports.write_passages(conn, plan, annotator, result)
                rows.add(ds_passages, ds_questions, {r[0] for r in plan.passages})
                imports.write_annotations(conn, plan, result)
                # the surface linter's suggestions, stored with the new rows (desktop/store/lint_facts.py)
                imports.store_lint(conn, plan, [[part_set, ds_passages, ds_questions]])
                if tally is not None:
                    tally.add(sum(len(p.questions) for p in part))
            rows.finish()
        for d in predictions:
            result.predictions += imports.write_predictions(conn, d, name or "predictions")
        if result.changed and sha is not None and not result.datasets:
            # prediction files have no dataset row; remember them for idempotency
            conn.execute("INSERT INTO imports (file, sha256, dataset_id, annotator, ts) VALUES (?,?,?,?,?)",
                         (name, sha, None, annotator, imports.now()))
        return result

    def load_datasets(self, source: str | None = None, annotator: str | None = None,
                      file: str | None = None) -> list[Dataset]:
        """The stored datasets, one per imported file, in import order, passages and questions
        in file order, every `extra` as it was read, with annotations.

        `annotator=None`: everyone's annotations; `annotator=NAME`: the imported ones and NAME's.
        `file`: only datasets imported from a file of that path or file name.
        """
        where, params = [], []
        if source:
            where.append("source = ?"); params.append(source)
        if file:
            where.append("(file = ? OR file LIKE ? ESCAPE '\\')"); params += [file, "%/" + _escape_like(file)]
        sql = "SELECT id, source, extra FROM datasets" + (" WHERE " + " AND ".join(where) if where else "")
        out = []
        for ds in self._c.query(sql + " ORDER BY id", params):
            dataset = Dataset(source=ds["source"], extra=loads(ds["extra"], "datasets", "extra", ds["id"], dict))
            passages = {}
            for r in self._c.query(
                    "SELECT dp.passage_id, dp.source, dp.split, dp.level, dp.extra, p.text FROM dataset_passages dp "
                    "JOIN passages p ON p.id = dp.passage_id WHERE dp.dataset_id=? ORDER BY dp.position",
                    (ds["id"],)):
                passages[r["passage_id"]] = Passage(id=r["passage_id"], text=r["text"], source=r["source"],
                                                    split=r["split"], level=r["level"],
                                                    extra=loads(r["extra"], "dataset_passages", "extra",
                                                                r["passage_id"], dict))
            for q in self._questions("q.dataset_id = ?", [ds["id"]], annotator):
                passages[q.passage_id].questions.append(q)
            dataset.passages = list(passages.values())
            out.append(dataset)
        return out

    # ------------------------------------------------------------ reading items

    def question(self, item_id: str, annotator: str | None = None) -> Question:
        """One question with all its annotations (`annotator`: imported ones and that annotator's only)."""
        found = self._questions("q.id = ?", [item_id], annotator)
        if not found:
            raise StoreError(f"unknown item {item_id!r}")
        return found[0]

    def passage(self, passage_id: str) -> Passage:
        """A passage's text and its questions (without annotations), in import order."""
        rows = self._c.query("SELECT id, text, source, split, level, extra FROM passages WHERE id=?", (passage_id,))
        if not rows:
            raise StoreError(f"unknown passage {passage_id!r}")
        r = rows[0]
        p = Passage(id=r["id"], text=r["text"], source=r["source"], split=r["split"], level=r["level"],
                    extra=loads(r["extra"], "passages", "extra", r["id"], dict))
        for q in self._c.query("SELECT * FROM questions WHERE passage_id=? ORDER BY dataset_id, position",
                               (passage_id,)):
            p.questions.append(_question_row(q))
        return p

    def items(self, source: str | None = None, status: str | None = None, search: str | None = None,
              passage_id: str | None = None, annotator: str | None = None,
              item_ids: Iterable[str] | None = None) -> list[ItemRow]:
        """Light rows for the navigator, in import order, in one query.

        `status` and `ItemRow.status` are `annotator`'s own (default: the store's annotator).
        `search` matches (case-insensitively) the item id, or a stem, alternative or passage
        text containing it (SQLite FTS5 narrows, an exact substring test decides).
        `item_ids`: only these items.
        """
        from . import navigation
        who = annotator or self.annotator
        where, params = [], []
        if source:
            where.append("q.source = ?"); params.append(source)
        if status:
            where.append("coalesce(me.status, 'untouched') = ?"); params.append(status)
        if passage_id:
            where.append("q.passage_id = ?"); params.append(passage_id)
        if item_ids is not None:
            ids = list(item_ids)
            where.append(f"q.id IN (SELECT value FROM json_each(?))"); params.append(imports.dumps(ids))
        if search:
            sql, more = navigation.search_where(search)
            where.append(sql); params += more
        return navigation.item_rows(self._c, who, where, params)

    def search(self, text: str) -> list[str]:
        """Item ids whose id, stem, alternatives or passage contain `text`."""
        return [r.item_id for r in self.items(search=text)]

    def status(self, item_id: str, annotator: str | None = None) -> str:
        """`annotator`'s own progress on the item: "untouched", "in progress" or "done"."""
        rows = self._c.query("SELECT status FROM item_status WHERE question_id=? AND annotator=?",
                             (item_id, annotator or self.annotator))
        return rows[0][0] if rows else "untouched"

    def statuses(self, item_id: str) -> dict[str, str]:
        """Every annotator's status of the item who has touched it ({annotator: status})."""
        return dict(self._c.query("SELECT annotator, status FROM item_status WHERE question_id=? ORDER BY annotator",
                                  (item_id,)))

    def furthest_status(self) -> dict[str, str]:
        """{item: the furthest status any annotator gave it} ("done" over "in progress" over "untouched")."""
        out = {r[0]: "untouched" for r in self._c.query("SELECT id FROM questions")}
        for r in self._c.query("SELECT question_id, max(status = 'done') FROM item_status GROUP BY question_id"):
            out[r[0]] = "done" if r[1] else "in progress"
        return out

    def questions(self, item_ids: Iterable[str], annotator: str | None = None) -> list[Question]:
        """Several questions with their annotations (as `question`), in import order; unknown ids are skipped."""
        ids = list(item_ids)
        if not ids:
            return []
        return self._questions("q.id IN (SELECT value FROM json_each(?))", [imports.dumps(ids)], annotator)

    def navigation(self, defaults: dict | None = None):
        """The navigator's paged queries on this connection (`desktop.store.navigation.Navigation`)."""
        from .navigation import Navigation
        return Navigation(self._c, defaults)

    def note(self, item_id: str, annotator: str | None = None) -> str | None:
        """The free-text problems note (`field="note"`) of `annotator` (default: the store's)."""
        rows = self._c.query("SELECT text FROM notes WHERE question_id=? AND annotator=?",
                             (item_id, annotator or self.annotator))
        return rows[0][0] if rows else None

    def own_view(self, item_id: str, annotator: str | None = None):
        """`annotator`'s status, note, own comments and answerability on the item, and its row
        version, in one query (`desktop.store.item_view`: what the window reads on each move)."""
        from .item_view import own_view
        return own_view(self._c, item_id, annotator or self.annotator)

    def annotators(self) -> list[str]:
        return [r[0] for r in self._c.query("SELECT name FROM annotators ORDER BY name")]

    # ------------------------------------------------------------ whole-corpus tables (reports)

    def bulk_items(self, source: str | None = None):
        """Every question as one pandas row (see `desktop.store.bulk.items`), in file order."""
        return bulk.items(self._c, source)

    def bulk_passage_texts(self, source: str | None = None) -> dict[str, str]:
        return bulk.passage_texts(self._c, source)

    def bulk_lint(self, source: str | None = None):
        """The linter's suggestions stored at import, per question and per passage (`bulk.stored_lint`)."""
        return bulk.stored_lint(self._c, source)

    def bulk_assessments(self, source: str | None = None, annotator: str | None = None):
        """Every assessment as a pandas row (`annotator`: the imported ones and that annotator's)."""
        return bulk.assessments(self._c, source, annotator)

    def bulk_problems(self, source: str | None = None, annotator: str | None = None):
        return bulk.problems(self._c, source, annotator)

    def bulk_spans(self, role: str, source: str | None = None, annotator: str | None = None):
        return bulk.spans(self._c, role, source, annotator)

    def rated_questions(self, source: str | None = None) -> list[tuple[Question, str]]:
        """(question, passage text) of every item two or more raters annotated (everyone's
        annotations), in file order: what the agreement report measures, read without
        building the items nobody annotated twice."""
        sub, params = bulk.rated_items_sql(source)
        questions = self._questions(f"q.id IN ({sub})", params, None)
        texts = dict(self._c.query(f"SELECT id, text FROM passages WHERE id IN (SELECT passage_id FROM questions "
                                   f"WHERE id IN ({sub}))", params))
        return [(q, texts[q.passage_id]) for q in questions]

    def time_on_item(self, annotator: str | None = None, item_id: str | None = None,
                     idle_limit: float | None = None) -> list[bulk.TimeOnItem]:
        """Seconds each annotator spent on each item, from the history's timestamps
        (`desktop.domain.time_on_item` gives the rule); one row per (item, annotator) with edits."""
        kw = {} if idle_limit is None else {"idle_limit": idle_limit}
        return bulk.time_on_item(self._c, annotator, item_id, **kw)

    # ------------------------------------------------------------ edits, undo, history

    @contextlib.contextmanager
    def batch(self):
        """Several writes as one transaction (a merge, a batch edit): all of them or none.

        Each `apply` inside still writes its own history row; `import_datasets` and
        `apply` nest as savepoints."""
        with self._c.transaction():
            yield self

    def apply(self, change: Change, expect: Any = conflicts.NOT_GIVEN) -> int:
        """Apply one edit in one transaction with its history row; returns the history id.

        A question edited for the first time by an annotator moves from "untouched" to
        "in progress" for that annotator (status is each annotator's own).
        `expect`: the field's value as the editing window showed it; if another program
        changed it since, `StaleEditError` (a StoreError) is raised and nothing is written.
        """
        who = change.annotator or self.annotator
        with self._c.transaction() as conn:
            before, after, target = edits.plan_change(conn, change, who)
            conflicts.check(conn, change, who, before, expect)
            self._ensure_annotator(conn, who)
            row_id = edits.set_state(conn, change.item, change.field, who, after, target)
            if change.field.endswith(".add"):
                after = dict(after, id=row_id)
            if change.field != "status":
                edits.touch(conn, change.item, who)
            conn.execute("UPDATE questions SET row_version = row_version + 1 WHERE id=?", (change.item,))
            # a fresh edit ends what this annotator could still redo
            conn.execute("UPDATE history SET undone=2 WHERE annotator=? AND kind='change' AND undone=1", (who,))
            return self._history(conn, who, change.item, change.field, before, after)

    def undo(self, annotator: str | None = None) -> HistoryRow | None:
        """Revert the annotator's latest change still in effect; returns the new "undo"
        history row (its `ref` is the change), or None when there is nothing to undo.

        Refuses (StoreError) when someone changed that field since, rather than lose their edit.
        """
        who = annotator or self.annotator
        with self._c.transaction() as conn:
            row = conn.execute("SELECT id FROM history WHERE annotator=? AND kind='change' AND undone=0 "
                               "ORDER BY id DESC LIMIT 1", (who,)).fetchone()
            if row is None:
                return None
            change = self._history_row(conn, row[0])
            self._restore(conn, change, change.after, change.before)
            conn.execute("UPDATE history SET undone=1 WHERE id=?", (change.id,))
            hid = self._history(conn, who, change.item, change.field, change.after, change.before,
                                kind="undo", ref=change.id)
            return self._history_row(conn, hid)

    def redo(self, annotator: str | None = None) -> HistoryRow | None:
        """Re-apply the annotator's most recently undone change; returns the "redo" history row."""
        who = annotator or self.annotator
        with self._c.transaction() as conn:
            row = conn.execute(
                "SELECT c.id FROM history u JOIN history c ON c.id = u.ref WHERE u.annotator=? AND u.kind='undo' "
                "AND c.undone=1 ORDER BY u.id DESC LIMIT 1", (who,)).fetchone()
            if row is None:
                return None
            change = self._history_row(conn, row[0])
            self._restore(conn, change, change.before, change.after)
            conn.execute("UPDATE history SET undone=0 WHERE id=?", (change.id,))
            hid = self._history(conn, who, change.item, change.field, change.before, change.after,
                                kind="redo", ref=change.id)
            return self._history_row(conn, hid)

    def can_undo(self, annotator: str | None = None) -> bool:
        return bool(self._c.query("SELECT 1 FROM history WHERE annotator=? AND kind='change' AND undone=0 LIMIT 1",
                                  (annotator or self.annotator,)))

    def can_redo(self, annotator: str | None = None) -> bool:
        return bool(self._c.query(
            "SELECT 1 FROM history u JOIN history c ON c.id = u.ref WHERE u.annotator=? AND u.kind='undo' "
            "AND c.undone=1 LIMIT 1", (annotator or self.annotator,)))

    def history(self, item_id: str | None = None, since: int | None = None) -> list[HistoryRow]:
        """The audit trail, oldest first: all of it, one item's, or the rows after id `since`
        (a second window polls this to refresh after another program's edits)."""
        where, params = [], []
        if item_id is not None:
            where.append("item = ?"); params.append(item_id)
        if since is not None:
            where.append("id > ?"); params.append(since)
        sql = "SELECT * FROM history" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        return [_history(r) for r in self._c.query(sql, params)]

    def row_version(self, item_id: str) -> int:
        """A counter bumped by every edit, undo and redo of the item (any annotator, any
        program): a window compares it with the value it loaded to know it must refresh."""
        rows = self._c.query("SELECT row_version FROM questions WHERE id=?", (item_id,))
        if not rows:
            raise StoreError(f"unknown item {item_id!r}")
        return rows[0][0]

    def last_history_id(self) -> int:
        return self._c.query("SELECT coalesce(max(id), 0) FROM history")[0][0]

    # ------------------------------------------------------------ model outputs

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
            known = {r[0] for r in conn.execute("SELECT id FROM questions")}
            unknown = sorted({v[0] for v in values} - known)
            if unknown:
                raise StoreError(f"predictions for unknown item(s): {', '.join(map(str, unknown[:5]))}")
            conn.executemany(
                "INSERT INTO predictions (question_id, model_id, input_format, probabilities, evidence, extra, "
                "created_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT (question_id, model_id, input_format) DO UPDATE SET "
                "probabilities=excluded.probabilities, evidence=excluded.evidence, extra=excluded.extra, "
                "created_at=excluded.created_at", values)
            models = sorted({v[1] for v in values})
            self._history(conn, self.annotator, None, "predictions", None, {"models": models, "rows": len(values)},
                          kind="predictions")
        return len(values)

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
        return [_prediction(r) for r in self._c.query(sql + " ORDER BY id", params)]

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
            known = {r[0] for r in conn.execute("SELECT id FROM questions")}
            unknown = sorted({v[0] for v in values} - known)
            if unknown:
                raise StoreError(f"explanations for unknown item(s): {', '.join(map(str, unknown[:5]))}")
            conn.executemany(
                "INSERT INTO explanations (question_id, model_id, method, fingerprint, result, created_at) "
                "VALUES (?,?,?,?,?,?) ON CONFLICT (question_id, model_id, method) DO UPDATE SET "
                "fingerprint=excluded.fingerprint, result=excluded.result, created_at=excluded.created_at", values)
            self._history(conn, self.annotator, None, "explanations", None,
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

    # ------------------------------------------------------------ counts

    def stats(self) -> dict:
        """{"sources": {source: {"files", "passages", "texts", "questions"}}, "status": {status: n},
        "status_by_source": {source: {status: n}}, "status_by_annotator": {annotator: {status: n}},
        "files": [{file, source, texts, questions}],
        "annotations": {table: rows}, "spans_by_role", "annotators": [...], "history": n}.

        "passages" counts distinct passages; "texts" counts them as the files hold them
        (EMBRACE green and yellow share some texts)."""
        sources: dict[str, dict[str, int]] = {}
        for r in self._c.query("SELECT source, count(*) FROM questions GROUP BY source ORDER BY source"):
            sources[r[0]] = {"files": 0, "passages": 0, "texts": 0, "questions": r[1]}
        for r in self._c.query("SELECT q.source, count(DISTINCT q.passage_id) FROM questions q GROUP BY q.source"):
            sources[r[0]]["passages"] = r[1]
        files = []
        for r in self._c.query(
                "SELECT d.id, d.file, d.source, (SELECT count(*) FROM dataset_passages dp WHERE dp.dataset_id = d.id), "
                "(SELECT count(*) FROM questions q WHERE q.dataset_id = d.id), "
                "CASE WHEN json_valid(d.extra) THEN json_extract(d.extra, '$.folder') END "
                "FROM datasets d ORDER BY d.id"):
            files.append({"file": r[1], "source": r[2], "texts": r[3], "questions": r[4], "folder": r[5]})
            entry = sources.setdefault(r[2], {"files": 0, "passages": 0, "texts": 0, "questions": 0})
            entry["files"] += 1
            entry["texts"] += r[3]
        # an item counts by the furthest status any annotator gave it (status is per annotator)
        best = ("(SELECT CASE max(s.status = 'done') WHEN 1 THEN 'done' WHEN 0 THEN 'in progress' END "
                "FROM item_status s WHERE s.question_id = q.id)")
        by_source: dict[str, dict[str, int]] = defaultdict(dict)
        status = {s: 0 for s in ("untouched", "in progress", "done")}
        for r in self._c.query(f"SELECT q.source, coalesce({best}, 'untouched') AS st, count(*) FROM questions q "
                               "GROUP BY q.source, st"):
            by_source[r[0]][r[1]] = r[2]
            status[r[1]] += r[2]
        by_annotator: dict[str, dict[str, int]] = defaultdict(dict)
        for r in self._c.query("SELECT annotator, status, count(*) FROM item_status GROUP BY annotator, status"):
            by_annotator[r[0]][r[1]] = r[2]
        annotations = {}
        for table in ("passages", "questions", "spans", "assessments", "problems", "comments", "answerability",
                      "notes", "predictions", "history"):
            annotations[table] = self._c.query(f"SELECT count(*) FROM {table}")[0][0]
        by_role = {r[0]: r[1] for r in self._c.query("SELECT role, count(*) FROM spans GROUP BY role")}
        return {"sources": sources, "status": status, "status_by_source": dict(by_source),
                "status_by_annotator": dict(by_annotator), "files": files,
                "annotations": annotations, "spans_by_role": by_role, "annotators": self.annotators(),
                "history": annotations["history"], "schema_version": self._c.query(
                    "SELECT version FROM schema_version")[0][0]}

    # ------------------------------------------------------------ internals

    def _questions(self, where: str, params: list, annotator: str | None) -> list[Question]:
        rows = self._c.query(f"SELECT * FROM questions q WHERE {where} ORDER BY q.dataset_id, q.position", params)
        if not rows:
            return []
        questions = {r["id"]: _question_row(r) for r in rows}
        sub = f"SELECT q.id FROM questions q WHERE {where}"
        mine = ""
        extra_params: list = []
        if annotator is not None:
            mine = " AND (origin = 'imported' OR annotator = ?)"
            extra_params = [annotator]
        for r in self._c.query(f"SELECT * FROM spans WHERE question_id IN ({sub}){mine} ORDER BY id",
                               params + extra_params):
            questions[r["question_id"]].spans.append(Span(
                start=r["start"], end=r["end"], role=r["role"], alternative=r["alternative"],
                annotator=r["annotator"], origin=r["origin"], extra=loads(r["extra"], "spans", "extra", r["id"], dict),
                id=r["id"]))
        for r in self._c.query(f"SELECT * FROM assessments WHERE question_id IN ({sub}){mine} ORDER BY id",
                               params + extra_params):
            questions[r["question_id"]].assessments.append(Assessment(
                values=loads(r["values"], "assessments", "values", r["id"], dict), annotator=r["annotator"], text_format=r["text_format"],
                multiple_texts=None if r["multiple_texts"] is None else bool(r["multiple_texts"]),
                unit_type=r["unit_type"], extra=loads(r["extra"], "assessments", "extra", r["id"], dict),
                origin=r["origin"]))
        for r in self._c.query(f"SELECT * FROM problems WHERE question_id IN ({sub}){mine} ORDER BY id",
                               params + extra_params):
            questions[r["question_id"]].problems.append(ProblemTag(
                type=r["type"], element=r["element"], annotator=r["annotator"], origin=r["origin"], note=r["note"],
                alternative=r["alternative"], start=r["start"], end=r["end"],
                extra=loads(r["extra"], "problems", "extra", r["id"], dict),
                id=r["id"]))
        for r in self._c.query(f"SELECT question_id, text FROM comments WHERE question_id IN ({sub}){mine} "
                               "ORDER BY origin != 'imported', annotator, position, id", params + extra_params):
            questions[r[0]].comments.append(r[1])
        labels: dict[str, list] = defaultdict(list)
        for r in self._c.query(f"SELECT question_id, annotator, label, ts FROM answerability WHERE question_id IN "
                               f"({sub}){mine} ORDER BY ts", params + extra_params):
            labels[r[0]].append((r[1], r[2]))
        for qid, found in labels.items():
            own = [label for who, label in found if who == annotator]
            questions[qid].answerability = own[-1] if own else found[-1][1]
        for r in self._c.query(f"SELECT * FROM predictions WHERE question_id IN ({sub}) ORDER BY id", params):
            questions[r["question_id"]].predictions.append(_prediction(r))
        return list(questions.values())

    def _restore(self, conn, change: HistoryRow, expected: Any, state: Any) -> None:
        target = edits.target_of(change.field, change.before, change.after)
        who = change.annotator
        current = edits.get_state(conn, change.item, change.field, who, target)
        if current != expected:
            raise StoreError(f"item {change.item}, field {change.field}: changed since (history {change.id}); "
                             "not undone, to keep the later edit")
        edits.set_state(conn, change.item, change.field, who, state, target)
        conn.execute("UPDATE questions SET row_version = row_version + 1 WHERE id=?", (change.item,))

    def _ensure_annotator(self, conn, name: str) -> None:
        conn.execute("INSERT OR IGNORE INTO annotators (name, kind, created_at) VALUES (?, 'human', ?)",
                     (name, imports.now()))

    def _history(self, conn, annotator: str, item: str | None, field: str, before: Any, after: Any,
                 kind: str = "change", ref: int | None = None) -> int:
        cur = conn.execute(
            "INSERT INTO history (annotator, ts, item, field, before, after, kind, ref) VALUES (?,?,?,?,?,?,?,?)",
            (annotator, imports.now(), item, field, imports.dumps(before), imports.dumps(after), kind, ref))
        return cur.lastrowid

    def _history_row(self, conn, hid: int) -> HistoryRow:
        cur = conn.execute("SELECT * FROM history WHERE id=?", (hid,))
        names = [d[0] for d in cur.description]
        return _history(dict(zip(names, cur.fetchone())))


class _Tally:
    """Questions an import has checked and written so far, told to `progress`."""

    def __init__(self, progress):
        self.progress, self.done = progress, 0

    def add(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done)


# Questions checked and written at a time: bounds what an import holds besides its reader
IMPORT_PART = 20_000


def _parts(passages: Iterable[Passage], questions: int) -> Iterator[list[Passage]]:
    """Passages in lists of about `questions` questions (a passage is never split)."""
    part: list[Passage] = []
    n = 0
    for p in passages:
        part.append(p)
        n += len(p.questions)
        if n >= questions:
            yield part
            part, n = [], 0
    if part:
        yield part


def _units(file, datasets: list[Dataset], database: str | None = None
           ) -> list[tuple[str | None, str | None, list[Dataset]]]:
    """(file, sha256, datasets) per file read: a folder's datasets each name their own file.

    Without a file (a merge from another database) nothing is fingerprinted, so a later
    plain import of that file still works."""
    if file is None:
        return [(None, None, datasets)]
    own = [d.extra.get("file") if isinstance(d.extra, dict) else None for d in datasets]
    if datasets and len(set(own)) == len(datasets) and all(own) and str(file) not in own:
        return [(f, d.extra.get("sha256"), [d]) for f, d in zip(own, datasets)]
    shas = {d.extra.get("sha256") for d in datasets if isinstance(d.extra, dict)}
    sha = shas.pop() if len(shas) == 1 and None not in shas else imports.file_sha256(file, database)
    return [(str(file) if file is not None else None, sha, datasets)]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _question_row(r) -> Question:
    return Question(id=r["id"], passage_id=r["passage_id"], index=r["idx"], stem=r["stem"],
                    alternatives=loads(r["alternatives"], "questions", "alternatives", r["id"], list), key=r["key"], source=r["source"],
                    unanswerable_alternatives=loads(r["unanswerable_alternatives"], "questions",
                                                    "unanswerable_alternatives", r["id"], list),
                    extra=loads(r["extra"], "questions", "extra", r["id"], dict))


def _prediction(r) -> Prediction:
    return Prediction(model_id=r["model_id"], input_format=r["input_format"],
                      probabilities=loads(r["probabilities"], "predictions", "probabilities", r["id"], list),
                      evidence=r["evidence"],
                      extra=loads(r["extra"], "predictions", "extra", r["id"], dict))


def _history(r) -> HistoryRow:
    return HistoryRow(id=r["id"], annotator=r["annotator"], ts=r["ts"], item=r["item"], field=r["field"],
                      before=None if r["before"] is None else loads(r["before"], "history", "before", r["id"]),
                      after=None if r["after"] is None else loads(r["after"], "history", "after", r["id"]),
                      kind=r["kind"], ref=r["ref"], undone=bool(r["undone"]))
