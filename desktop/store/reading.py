"""The Store's reads of items: datasets, questions, passages, the navigator's rows, status.

One query per table for any number of questions (`questions_where`); what the window reads
on each move is `item_view.py`, the navigator's paged reads `navigation.py`.  A part of
`Store` (`store.reads`).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from desktop.domain.errors import StoreError
from desktop.domain.model import Assessment, Dataset, Passage, ProblemTag, Question, Span

from . import imports
from .connection import Connection
from .decode import loads, prediction_row, question_row
from .item_rows import item_rows
from .item_search import search_where
from .item_view import own_view
from .navigation import Navigation
from .rows import ItemRow


class Reads:
    """Reading datasets, questions and items; `annotator()` is the store's annotator of the moment
    (whose status, note and own view are read when no annotator is named)."""

    def __init__(self, connection: Connection, annotator: Callable[[], str]):
        self._c, self._annotator = connection, annotator

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
            for q in self.questions_where("q.dataset_id = ?", [ds["id"]], annotator):
                passages[q.passage_id].questions.append(q)
            dataset.passages = list(passages.values())
            out.append(dataset)
        return out

    def question(self, item_id: str, annotator: str | None = None) -> Question:
        """One question with all its annotations (`annotator`: imported ones and that annotator's only)."""
        found = self.questions_where("q.id = ?", [item_id], annotator)
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
            p.questions.append(question_row(q))
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
        who = annotator or self._annotator()
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
            sql, more = search_where(search)
            where.append(sql); params += more
        return item_rows(self._c, who, where, params)

    def search(self, text: str) -> list[str]:
        """Item ids whose id, stem, alternatives or passage contain `text`."""
        return [r.item_id for r in self.items(search=text)]

    def status(self, item_id: str, annotator: str | None = None) -> str:
        """`annotator`'s own progress on the item: "untouched", "in progress" or "done"."""
        rows = self._c.query("SELECT status FROM item_status WHERE question_id=? AND annotator=?",
                             (item_id, annotator or self._annotator()))
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
        return self.questions_where("q.id IN (SELECT value FROM json_each(?))", [imports.dumps(ids)], annotator)

    def navigation(self, defaults: dict | None = None):
        """The navigator's paged queries on this connection (`desktop.store.navigation.Navigation`)."""
        return Navigation(self._c, defaults)

    def note(self, item_id: str, annotator: str | None = None) -> str | None:
        """The free-text problems note (`field="note"`) of `annotator` (default: the store's)."""
        rows = self._c.query("SELECT text FROM notes WHERE question_id=? AND annotator=?",
                             (item_id, annotator or self._annotator()))
        return rows[0][0] if rows else None

    def own_view(self, item_id: str, annotator: str | None = None):
        """`annotator`'s status, note, own comments and answerability on the item, and its row
        version, in one query (`desktop.store.item_view`: what the window reads on each move)."""
        return own_view(self._c, item_id, annotator or self._annotator())

    def annotators(self) -> list[str]:
        return [r[0] for r in self._c.query("SELECT name FROM annotators ORDER BY name")]

    def questions_where(self, where: str, params: list, annotator: str | None) -> list[Question]:
        """The questions matching the SQL condition `where` (over `questions q`), in import order,
        with their annotations (`annotator`: the imported ones and that annotator's; None: all)."""
        rows = self._c.query(f"SELECT * FROM questions q WHERE {where} ORDER BY q.dataset_id, q.position", params)
        if not rows:
            return []
        questions = {r["id"]: question_row(r) for r in rows}
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
            questions[r["question_id"]].predictions.append(prediction_row(r))
        return list(questions.values())


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

