"""Import of domain datasets into the store: validation, idempotency, one transaction.

A question id already stored with the same content is skipped (re-importing a file
adds nothing); the same id with other content is an InputError naming the file, the
record (the question or passage id) and the field, and nothing is written.
"""
from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from desktop.domain.errors import InputError
from desktop.domain.model import DEFAULT_ANNOTATOR, IMPORTED, Dataset, Passage, Question

from desktop.domain import values
from desktop.formats import walk

from . import lint_facts, own_files, staged_insert
from .import_checks import check_id, check_text, validate_question
from .json_text import canonical, dumps, fingerprint
from .rows import ImportResult


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def file_sha256(path: str | Path | None, database: str | None = None) -> str | None:
    """Content hash of a file, or of the data files a folder import reads (names included).

    Never of `database` or its -wal/-shm/-journal (a folder may hold the store itself):
    reading them outside SQLite, while this process holds a connection, would drop
    SQLite's locks on them (see `connection._probe`).  Files are compared by device and
    inode, through `os.stat`, which opens nothing."""
    if path is None:
        return None

    p = Path(path)
    h = hashlib.sha256()
    skip = own_files.inodes(database)
    try:
        if p.is_dir():
            for f in walk(p):
                if own_files.inode(f) in skip:
                    continue
                h.update(str(f.relative_to(p.resolve())).encode("utf-8", "surrogateescape") + b"\0")
                _hash_into(h, f)
        elif p.is_file():
            if own_files.inode(p) in skip:
                return None
            _hash_into(h, p)
        else:
            return None
    except OSError:
        return None
    return h.hexdigest()


def _hash_into(h, f: Path) -> None:
    with open(f, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)


class _Plan:
    """Rows to insert, built and checked entirely before the first write."""

    def __init__(self):
        self.passages: list[tuple] = []
        self.dataset_passages: list[tuple] = []  # without dataset id (added at insert time)
        self.questions: list[tuple] = []
        self.spans: list[tuple] = []
        self.assessments: list[tuple] = []
        self.problems: list[tuple] = []
        self.comments: list[tuple] = []
        self.answerability: list[tuple] = []
        self.predictions: list[tuple] = []
        self.annotators: set[str] = set()
        self.unchanged = 0


def _check_json(file: str, record: str, field: str, value: Any) -> str:
    try:
        text = dumps(value)
    except RecursionError:
        text = None
    except (TypeError, ValueError) as exc:
        raise InputError(file, record, field, f"value cannot be stored as JSON ({exc})") from exc
    if text is None or values.could_have_problem(text):
        bad = values.problem(value)
        if bad is not None:
            where, message = bad
            raise InputError(file, record, f"{field}.{where}" if where else field, message)
    return text


def _who(obj_annotator: str | None, annotator: str) -> str:
    # Objects read from a file say "imported"; `--annotator NAME` attributes them to NAME.
    if not obj_annotator or obj_annotator == DEFAULT_ANNOTATOR:
        return annotator
    return obj_annotator


def question_annotations(q: Question, annotator: str) -> dict:
    """The imported annotations of a question in a comparable form (for the fingerprint).

    Lists are sorted: a file re-saved with other key order yields the same annotations
    in another order, and that is the same content."""
    def canon(rows):
        return sorted(map(canonical, rows))

    return {
        "spans": canon([s.role, s.alternative, s.start, s.end, _who(s.annotator, annotator), s.origin, s.extra]
                       for s in q.spans),
        "assessments": canon([_who(a.annotator, annotator), a.values, a.text_format, a.multiple_texts,
                              a.unit_type, a.extra] for a in q.assessments),
        "problems": canon([p.type, p.element, _who(p.annotator, annotator), p.origin, p.note, p.alternative,
                           p.start, p.end, p.extra] for p in q.problems),
        "comments": list(q.comments),
        "answerability": q.answerability,
    }


# the fingerprint of a question that comes without annotations (most of a RACE file): the same for
# every one of them, whoever imports it
_NO_ANNOTATIONS = fingerprint({"spans": [], "assessments": [], "problems": [], "comments": [], "answerability": None})


def plan_import(conn, datasets: list[Dataset], annotator: str, file: str,
                cache: dict | None = None, positions: list[int] | None = None, lints=lint_facts
                ) -> tuple[_Plan, list[list]]:
    """Check everything against the database and build the rows; writes nothing.

    `cache`: facts about the database shared by the files of one transaction.
    `positions`: [passage position, question position] where a dataset read in parts goes
    on (updated); the database is the registry of what earlier parts stored.
    `lints`: what finds the linter's suggestions of the new rows (`question_lints`,
    `passage_lints`): `lint_facts`, or what a second process found (`lint_ahead.Found`)."""
    plan = _Plan()
    _keep_former_ids(conn, datasets, {} if cache is None else cache)
    # only the rows these datasets name (a folder is imported file by file: loading every
    # stored passage for each file would cost the whole database per file)
    stored_passages = dict(lookup(conn, "SELECT id, text FROM passages WHERE id IN ({})",
                                   [p.id for d in datasets for p in d.passages if isinstance(p.id, str)]))
    stored_questions = {r[0]: r[1:] for r in lookup(
        conn, "SELECT id, passage_id, idx, stem, alternatives, key, extra, imported_annotations FROM questions "
              "WHERE id IN ({})", [q.id for d in datasets for q in d.questions() if isinstance(q.id, str)])}
    new_passages: dict[str, str] = {}
    seen_questions: dict[str, tuple] = {}
    per_dataset: list[list] = []  # per dataset: [dataset, passage rows, question rows]
    ts = now()
    for dataset in datasets:
        ds_passages: list[tuple] = []
        ds_questions: list[tuple] = []
        to_lint: list[tuple[str, list[str], str]] = []  # (stem, alternatives, passage text) of each row
        p_start, q_position = positions if positions is not None else (0, 0)
        for p_position, p in enumerate(dataset.passages, p_start):
            _plan_passage(file, p, stored_passages, new_passages, plan)
            ds_passages.append((p.id, p_position, p.source or dataset.source, p.split, p.level,
                                _check_json(file, p.id, "extra", p.extra)))
            for q in p.questions:
                validate_question(file, q, p.text)
                if q.passage_id != p.id:
                    raise InputError(file, q.id, "passage_id",
                                     f"question says passage {q.passage_id!r} but sits in passage {p.id!r}")
                alternatives = dumps(q.alternatives)
                extra = _check_json(file, q.id, "extra", q.extra)
                ann = (_NO_ANNOTATIONS if not (q.spans or q.assessments or q.problems or q.comments)
                       and q.answerability is None else fingerprint(question_annotations(q, annotator)))
                content = (p.id, q.index, q.stem, alternatives, q.key, extra, ann)
                old = stored_questions.get(q.id) or seen_questions.get(q.id)
                if old is not None:
                    _same_question(file, q.id, old, content)
                    plan.unchanged += 1
                    continue
                seen_questions[q.id] = content
                ds_questions.append((q.id, p.id, q.index, q_position, q.stem, alternatives, q.key,
                                     q.source or p.source or dataset.source,
                                     dumps(list(q.unanswerable_alternatives)), extra, ann))
                to_lint.append((q.stem, q.alternatives, p.text))
                q_position += 1
                _plan_annotations(file, q, annotator, ts, plan)
        if positions is not None:
            positions[:] = [p_start + len(ds_passages), q_position]
        per_dataset.append([dataset, ds_passages, lint_facts.with_lint(ds_questions, lints.question_lints(to_lint))])
    plan.passages = lint_facts.with_lint(plan.passages, lints.passage_lints([r[1] for r in plan.passages]))
    return plan, per_dataset


def lookup(conn, sql: str, ids: list[str]) -> list[tuple]:
    """The rows of `sql` (its `IN ({})` filled in) for `ids`, 500 ids to a query."""
    rows: list[tuple] = []
    ids = list(dict.fromkeys(ids))
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        rows += conn.execute(sql.format(",".join("?" * len(chunk))), chunk).fetchall()
    return rows


def _keep_former_ids(conn, datasets: list[Dataset], cache: dict) -> None:
    """A reader that renamed a passage (RACE: "high10024.txt" → "test/high/10024") says so in
    `extra["former_id"]`; a database that stored the former name goes on using it, so that
    re-importing its files adds nothing and its items keep their ids."""
    renamed = [p for d in datasets for p in d.passages if isinstance(p.extra.get("former_id"), str)]
    if not renamed:
        return
    stored = {r[0] for r in lookup(conn, "SELECT id FROM passages WHERE id IN ({})",
                                    [p.extra["former_id"] for p in renamed] + [p.id for p in renamed])}
    # a database that names RACE passages the former way ("high10024.txt") keeps doing so for
    # new RACE files too: one naming per database
    # (asked once per transaction: it scans the passages, and a folder is imported file by file)
    if "former_naming" not in cache:
        cache["former_naming"] = conn.execute(
            "SELECT 1 FROM passages WHERE source = 'race' AND (id GLOB 'high[0-9]*.txt' "
            "OR id GLOB 'middle[0-9]*.txt') LIMIT 1").fetchone() is not None
    former_naming = cache["former_naming"]
    for p in renamed:
        former = p.extra["former_id"]
        if (former in stored or former_naming) and p.id not in stored:
            p.id = former
            for q in p.questions:
                q.id, q.passage_id = f"{former}-{q.index}", former


def _plan_passage(file: str, p: Passage, stored: dict, new: dict, plan: _Plan) -> None:
    check_id(file, p.id, "passage")
    check_text(file, p.id, "text", p.text, "passage text")
    known = stored.get(p.id, new.get(p.id))
    if known is not None:
        if known != p.text:
            raise InputError(file, p.id, "text", "a passage with this id is already stored with a different text")
        return
    new[p.id] = p.text
    plan.passages.append((p.id, p.text, p.source, p.split, p.level, _check_json(file, p.id, "extra", p.extra)))


_FIELDS = ("passage", "index", "stem", "alternatives", "key", "extra", "annotations")


def _same_question(file: str, qid: str, old: tuple, new: tuple) -> None:
    for name, a, b in zip(_FIELDS, old, new):
        if name in ("alternatives", "extra") and a != b:
            a, b = json.loads(a), json.loads(b)  # equal up to key order is the same content
        if a != b:
            raise InputError(file, qid, name, "a question with this id is already stored with different content")


def _plan_annotations(file: str, q: Question, annotator: str, ts: str, plan: _Plan) -> None:
    for s in q.spans:
        who = _who(s.annotator, annotator)
        plan.annotators.add(who)
        plan.spans.append((q.id, s.role, s.alternative, s.start, s.end, who, s.origin,
                           _check_json(file, q.id, "span.extra", s.extra)))
    for a in q.assessments:
        who = _who(a.annotator, annotator)
        plan.annotators.add(who)
        plan.assessments.append((q.id, who, IMPORTED, _check_json(file, q.id, "difficulty", a.values),
                                 a.text_format, None if a.multiple_texts is None else int(bool(a.multiple_texts)),
                                 a.unit_type, _check_json(file, q.id, "assessment.extra", a.extra)))
    for pr in q.problems:
        who = _who(pr.annotator, annotator)
        plan.annotators.add(who)
        plan.problems.append((q.id, pr.type, pr.element, who, pr.origin, pr.note or "", pr.alternative,
                              pr.start, pr.end, _check_json(file, q.id, "problem.extra", pr.extra)))
    for i, c in enumerate(q.comments):
        check_text(file, q.id, f"comments[{i}]", c, "a comment")
        plan.comments.append((q.id, annotator, IMPORTED, i, c))
    if q.answerability is not None:
        plan.answerability.append((q.id, annotator, q.answerability, IMPORTED, ts))
    for pr in q.predictions:
        plan.predictions.append((q.id, pr.model_id, pr.input_format, dumps(list(pr.probabilities)),
                                 pr.evidence, _check_json(file, q.id, "prediction.extra", pr.extra), ts))


class DatasetRows:
    """The `datasets`, `dataset_passages`, `questions` and `imports` rows of one dataset, written
    part by part inside the caller's transaction (a file too large to hold is stored as it is
    read again).  As for a whole dataset: a dataset with nothing new gets no row at all, and
    once something is new, every one of its passages is listed (those of earlier parts too)."""

    def __init__(self, conn, dataset: Dataset, annotator: str, file: str | None, sha: str | None,
                 result: ImportResult):
        self.conn, self.dataset, self.annotator, self.file, self.sha = conn, dataset, annotator, file, sha
        self.result = result
        self.did: int | None = None
        self.pending: list[tuple] = []  # dataset_passages rows of parts before anything was new
        self.positions = [0, 0]  # where the next part goes on (see `plan_import`)

    def add(self, ds_passages: list[tuple], ds_questions: list[tuple], new_passages: set[str]) -> None:
        if self.did is None:
            if not ds_questions and not any(r[0] in new_passages for r in ds_passages):
                self.pending += ds_passages  # everything in it is already stored (so far)
                return
            cur = self.conn.execute(
                "INSERT INTO datasets (source, file, sha256, annotator, imported_at, extra) VALUES (?,?,?,?,?,?)",
                (self.dataset.source, self.file, self.sha, self.annotator, now(),
                 _check_json(self.file or "", "dataset", "extra", self.dataset.extra)))
            self.did = cur.lastrowid
            self.result.datasets += 1
            ds_passages, self.pending = self.pending + ds_passages, []
        self.conn.executemany(
            "INSERT INTO dataset_passages (dataset_id, passage_id, position, source, split, level, extra) "
            "VALUES (?,?,?,?,?,?,?)", [(self.did, *r) for r in ds_passages])
        staged_insert.insert_rows(self.conn, "questions", staged_insert.QUESTION_COLUMNS, [(r[0], self.did, *r[1:]) for r in ds_questions])
        for r in ds_questions:
            self.result.per_source[r[7]] = self.result.per_source.get(r[7], 0) + 1
        self.result.questions += len(ds_questions)

    def finish(self) -> None:
        if self.did is not None:
            self.conn.execute("INSERT INTO imports (file, sha256, dataset_id, annotator, ts) VALUES (?,?,?,?,?)",
                              (self.file, self.sha, self.did, self.annotator, now()))
        self.pending = []


def write_passages(conn, plan: _Plan, annotator: str, result: ImportResult) -> None:
    """Insert the planned annotators and passages (before the questions that name them); the
    counts add up in `result` (a dataset read in parts is written part by part)."""
    ts = now()
    plan.annotators.add(annotator)
    conn.executemany("INSERT OR IGNORE INTO annotators (name, kind, created_at) VALUES (?, 'import', ?)",
                     [(a, ts) for a in sorted(plan.annotators)])
    staged_insert.insert_rows(conn, "passages", staged_insert.PASSAGE_COLUMNS, plan.passages)
    result.passages += len(plan.passages)
    result.unchanged_questions += plan.unchanged


def write_annotations(conn, plan: _Plan, result: ImportResult) -> None:
    """Insert the planned annotations (after their questions)."""
    conn.executemany(
        'INSERT INTO spans (question_id, role, alternative, start, "end", annotator, origin, extra) '
        "VALUES (?,?,?,?,?,?,?,?)", plan.spans)
    conn.executemany(
        'INSERT INTO assessments (question_id, annotator, origin, "values", text_format, multiple_texts, '
        "unit_type, extra) VALUES (?,?,?,?,?,?,?,?)", plan.assessments)
    conn.executemany(
        'INSERT INTO problems (question_id, type, element, annotator, origin, note, alternative, start, "end", '
        "extra) VALUES (?,?,?,?,?,?,?,?,?,?)", plan.problems)
    conn.executemany("INSERT INTO comments (question_id, annotator, origin, position, text) VALUES (?,?,?,?,?)",
                     plan.comments)
    conn.executemany("INSERT INTO answerability (question_id, annotator, label, origin, ts) VALUES (?,?,?,?,?)",
                     plan.answerability)
    conn.executemany(
        "INSERT OR IGNORE INTO predictions (question_id, model_id, input_format, probabilities, evidence, extra, "
        "created_at) VALUES (?,?,?,?,?,?,?)", plan.predictions)
    result.spans += len(plan.spans)
    result.assessments += len(plan.assessments)
    result.problems += len(plan.problems)
    result.comments += len(plan.comments)
    result.predictions += len(plan.predictions)


def write_predictions(conn, dataset: Dataset, file: str) -> int:
    """Model output from a prediction file (ExpMRC {"<pid>-<j>": {answer, evidence}}); returns rows changed."""
    preds = dataset.extra.get("predictions") or {}
    known = {r[0] for r in conn.execute("SELECT id FROM questions")}
    rows = []
    ts = now()
    for qid, pr in preds.items():
        if qid not in known:
            raise InputError(file, qid, None, "no question with this id in the database; import its dataset first")
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in pr.probabilities):
            raise InputError(file, qid, "probabilities", "probabilities must be finite numbers")
        rows.append((qid, pr.model_id, pr.input_format, dumps(list(pr.probabilities)), pr.evidence,
                     _check_json(file, qid, "extra", pr.extra), ts))
    before = conn.total_changes
    conn.executemany(
        "INSERT INTO predictions (question_id, model_id, input_format, probabilities, evidence, extra, created_at) "
        "VALUES (?,?,?,?,?,?,?) ON CONFLICT (question_id, model_id, input_format) DO UPDATE SET "
        "probabilities=excluded.probabilities, evidence=excluded.evidence, extra=excluded.extra, "
        "created_at=excluded.created_at WHERE probabilities IS NOT excluded.probabilities "
        "OR evidence IS NOT excluded.evidence OR extra IS NOT excluded.extra", rows)
    return conn.total_changes - before
