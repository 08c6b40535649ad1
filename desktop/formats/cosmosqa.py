"""CosmosQA CSV: context, question, answer0..answerN, label [, id]; read-only.

Rows sharing a context become one passage, named by its text ("cosmosqa-" + the first
12 hex digits of the context's sha1), so that two files (train and dev) that share a
context agree on its id whatever their order; the question id is the row's id when the
file has one, else "<passage id>-<k>" with k the first 8 hex digits of the sha1 of the
question and its answers (again the same in any file).  A missing label (the test
split) gives a question without key.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
import re

from desktop.domain import values
from desktop.domain.errors import InputError
from desktop.domain.model import Dataset, Passage, Question

from . import safe_read

_ANSWER = re.compile(r"answer([0-9])")  # ASCII: `\d` would take "answer١" for answer1


def read(path: str | os.PathLike, annotator: str | None = None) -> Dataset:
    file = str(path)
    text = safe_read.read_text(path)
    csv.field_size_limit(safe_read.MAX_BYTES)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(file, None, None, f"malformed CSV: {exc}") from None
    if not rows:
        raise InputError(file, None, None, "the file is empty")
    header = [h.strip() for h in rows[0]]
    for need in ("context", "question"):
        if need not in header:
            raise InputError(file, "line 1", need, "missing column")
    answer_cols = sorted((values.whole_number(m.group(1)), i) for i, h in enumerate(header)
                         if (m := _ANSWER.fullmatch(h)))
    if [k for k, _ in answer_cols] != list(range(len(answer_cols))):
        raise InputError(file, "line 1", "answer0..", "answer columns must be answer0, answer1, ... without gaps")
    col = {h: i for i, h in enumerate(header)}
    ds = Dataset(source="cosmosqa", extra={"file": file, "format": "cosmosqa"})
    by_context: dict[str, Passage] = {}
    seen = safe_read.IdRegistry(file, "question")
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        label = f"line {n}"
        if len(row) != len(header):
            raise InputError(file, label, None, f"{len(row)} cells for {len(header)} columns")
        context, stem = row[col["context"]], row[col["question"]]
        alts = safe_read.check_alternatives([row[i] for _, i in answer_cols], file, label, "answer0..")
        key = None
        if "label" in col and row[col["label"]].strip() != "":
            key = safe_read.index(row[col["label"]].strip(), len(alts), file, label, "label", "label ")
        passage = by_context.get(context)
        if passage is None:
            passage = Passage(id=f"cosmosqa-{_digest(context)[:12]}", text=context, source="cosmosqa")
            by_context[context] = passage
            ds.passages.append(passage)
        j = len(passage.questions)
        qid = row[col["id"]] if "id" in col and row[col["id"]].strip() else \
            f"{passage.id}-{_digest(chr(0).join([stem, *alts]))[:8]}"
        safe_read.check_id(qid, file, label)
        label = f"line {n} (id {qid})"
        if not seen.add(qid, row, label):
            continue
        passage.questions.append(Question(id=qid, passage_id=passage.id, index=j, stem=stem, alternatives=alts,
                                          key=key, source="cosmosqa"))
    return ds


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
