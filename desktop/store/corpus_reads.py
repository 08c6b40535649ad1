"""The Store's whole-corpus reads: the report tables, the rated items, time on item, counts.

The queries themselves are `bulk.py` (one per table, pandas frames); `stats` is what
`mcqlens stats` prints.  A part of `Store` (`store.corpus`).
"""
from __future__ import annotations

from collections import defaultdict

from desktop.domain.model import Question

from . import bulk
from .connection import Connection
from .reading import Reads


class CorpusReads:
    """Whole-corpus tables and counts; questions are built by the store's `Reads`."""

    def __init__(self, connection: Connection, reads: Reads):
        self._c, self._reads = connection, reads

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
        questions = self._reads.questions_where(f"q.id IN ({sub})", params, None)
        texts = dict(self._c.query(f"SELECT id, text FROM passages WHERE id IN (SELECT passage_id FROM questions "
                                   f"WHERE id IN ({sub}))", params))
        return [(q, texts[q.passage_id]) for q in questions]

    def time_on_item(self, annotator: str | None = None, item_id: str | None = None,
                     idle_limit: float | None = None) -> list[bulk.TimeOnItem]:
        """Seconds each annotator spent on each item, from the history's timestamps
        (`desktop.domain.time_on_item` gives the rule); one row per (item, annotator) with edits."""
        kw = {} if idle_limit is None else {"idle_limit": idle_limit}
        return bulk.time_on_item(self._c, annotator, item_id, **kw)

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
                "annotations": annotations, "spans_by_role": by_role, "annotators": self._reads.annotators(),
                "history": annotations["history"], "schema_version": self._c.query(
                    "SELECT version FROM schema_version")[0][0]}

