"""ExpMRC (RACE+): {version, data: [{id, article, questions, options, answers, evidences}]}.

Each evidence reference evidences[j][r] becomes an evidence Span located in the
article, annotator "expmrc-ref-{r+1}".  The reference text is kept verbatim in
`span.extra["reference"]` so that export writes it back exactly even where it was
located only up to whitespace.  A reference that cannot be located is kept in
`question.extra["unlocated_evidence"]` and reported as an error row in
`dataset.extra["warnings"]`; it is never dropped.

Prediction files {"<pid>-<j>": {"answer": "C", "evidence": "..."}} are read by
`read_predictions`.
"""
from __future__ import annotations

import bisect
import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from desktop.domain import resolve
from desktop.domain.errors import InputError
from desktop.domain.model import EVIDENCE, IMPORTED, LETTERS, MODEL, Dataset, Passage, Prediction, Span, letter

from . import safe_read
from .race import in_order, passage_from_record, record_from_passage

EXACT, WHITESPACE = "exact", "whitespace"


def reference_annotator(r: int) -> str:
    return f"expmrc-ref-{r + 1}"


_BLOCK = 1 << 16
_SPACE = re.compile(r"\s+")


class _Locator:
    """Finds a reference in one article: exactly, else ignoring all whitespace (linear time).

    The whitespace-free copy of the article is built once; a position in it is mapped back
    through the copy's length at every 64 K characters of the article (a few numbers, not
    one per character: a list of offsets for a 190 MB article took gigabytes)."""

    def __init__(self, article: str):
        self.article = article
        self._compact: str | None = None
        self._marks: list[int] = []  # compact length before each block of the article

    def locate(self, ref: str) -> tuple[int, int, str] | None:
        if not ref.strip():
            return None
        i = self.article.find(ref)
        if i >= 0:
            return i, i + len(ref), EXACT
        if self._compact is None:
            parts, self._marks = [], [0]
            for k in range(0, len(self.article), _BLOCK):
                parts.append(_SPACE.sub("", self.article[k:k + _BLOCK]))
                self._marks.append(self._marks[-1] + len(parts[-1]))
            self._compact = "".join(parts)
        needle = "".join(ref.split())
        i = self._compact.find(needle)
        if i < 0:
            return None
        return self._original(i), self._original(i + len(needle) - 1) + 1, WHITESPACE

    def _original(self, c: int) -> int:
        """The article index of the c-th non-whitespace character."""
        b = bisect.bisect_right(self._marks, c) - 1
        left = c - self._marks[b]
        start = b * _BLOCK
        for k, ch in enumerate(self.article[start:start + _BLOCK]):
            if not ch.isspace():
                if left == 0:
                    return start + k
                left -= 1
        raise AssertionError("compact index beyond its block")  # pragma: no cover


def read(path: str | os.PathLike, annotator: str | None = None) -> Dataset:
    """An ExpMRC dataset file → Dataset (evidence annotators are fixed by reference position)."""
    file = str(path)
    text = safe_read.read_text(path)
    style = safe_read.json_style(text)  # indentation and separators, so an unedited export is byte-identical
    doc = safe_read.loads(text, file)
    del text
    if not isinstance(doc, dict):
        raise InputError(file, None, None, f"expected a JSON object with 'data', found {safe_read.type_name(doc)}")
    data = safe_read.get(doc, "data", "list", file, None)
    ds = Dataset(source="expmrc", extra={
        "file": file, "format": "expmrc", "warnings": [], "json_style": style, "keys": list(doc),
        "top": {k: v for k, v in doc.items() if k != "data"},
        "counts": {EXACT: 0, WHITESPACE: 0, "unlocated": 0},
    })
    seen = safe_read.IdRegistry(file, "passage")
    for i, rec in enumerate(data):
        label = f"data[{i}]"
        passage = passage_from_record(rec, file, label, source="expmrc")
        label = f"{label} (id {passage.id})"
        passage.extra["record"].pop("evidences", None)
        evidences = safe_read.get(rec, "evidences", "list", file, label)
        if len(evidences) != len(passage.questions):
            raise InputError(file, label, "evidences",
                             f"{len(evidences)} evidence lists for {len(passage.questions)} questions")
        locator = _Locator(passage.text)
        for j, (q, refs) in enumerate(zip(passage.questions, evidences)):
            safe_read.check_type(refs, "list", file, label, f"evidences[{j}]")
            for r, ref in enumerate(refs):
                safe_read.check_type(ref, "string", file, label, f"evidences[{j}][{r}]")
                _add_reference(ds, q, passage, locator, r, ref, file)
        if seen.add(passage.id, rec, label):
            ds.passages.append(passage)
    return ds


def _add_reference(ds: Dataset, q, passage: Passage, locator: _Locator, r: int, ref: str, file: str) -> None:
    found = locator.locate(ref)
    if found is None:
        q.extra.setdefault("unlocated_evidence", []).append({"ref_index": r, "text": ref})
        ds.extra["counts"]["unlocated"] += 1
        ds.extra["warnings"].append({
            "level": "error", "file": file, "record": q.id, "field": f"evidences[{q.index}][{r}]",
            "message": "evidence reference not found in the article; kept unlocated"})
        return
    start, end, how = found
    ds.extra["counts"][how] += 1
    q.spans.append(Span(start=start, end=end, role=EVIDENCE, annotator=reference_annotator(r), origin=IMPORTED,
                        extra={"reference": ref, "ref_index": r, "match": how, "located": [start, end]}))


def evidence_references(q, passage_text: str) -> list[str]:
    """The evidences[j] list for one question: the imported references in their order
    (verbatim where the span was not moved), then one joined reference per other annotator.

    The evidence is the item's as the window shows it (`desktop.domain.resolve.item`:
    every layer's, never an unaccepted model suggestion)."""
    refs: dict[int, str] = {}
    others: dict[str, list[Span]] = defaultdict(list)
    for span in resolve.item(q).evidence:
        r = span.extra.get("ref_index")
        if r is not None and span.annotator == reference_annotator(r) and r not in refs:
            unchanged = list(span.extra.get("located", [])) == [span.start, span.end]
            refs[r] = span.extra["reference"] if unchanged and "reference" in span.extra \
                else passage_text[span.start:span.end]
        else:
            others[span.annotator].append(span)
    for u in q.extra.get("unlocated_evidence", []):
        refs.setdefault(u["ref_index"], u["text"])
    out = [refs[r] for r in sorted(refs)]
    for spans in others.values():
        out.append(" ".join(passage_text[s.start:s.end] for s in sorted(spans, key=lambda s: s.start)))
    return out


def write(datasets: Dataset | list[Dataset], path: str | os.PathLike) -> None:
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    style = next((ds.extra["json_style"] for ds in datasets if ds.extra.get("json_style")), None)
    text = safe_read.dumps_line(to_document(datasets), style)
    safe_read.write_text_atomic(path, text + ("\n" if (style or {}).get("final_newline") else ""))


def has_evidence(q) -> bool:
    """Whether a question carries evidence an ExpMRC file can hold (a model's suggestion is none)."""
    return any(s.role == EVIDENCE and s.origin != MODEL for s in q.spans)


def records(datasets: list[Dataset]) -> list[dict]:
    """The `data` of an ExpMRC file: every passage read from ExpMRC, as it was read, and every
    other RACE-style passage (RACE, EMBRACE, DREAM, QuAIL, CosmosQA) that has evidence.

    Such a passage becomes one record (articles grouped by passage): its questions that have
    evidence, in their order, each reference the evidence's passage text (one per annotator),
    the answer the key's letter.  The official scorer names the j-th question of a record
    "<id>-<j>" and needs a reference for each question it scores, so a question without
    evidence is left out; the record's `question_ids` say which item each question is, and
    where leaving questions out moves one (question 2 written as the first), the record's id
    is "<passage id>~<indexes>" so that "<id>-<j>" is never the name of another item."""
    data = []
    for ds in datasets:
        for p in ds.passages:
            if ds.source == "expmrc" or p.source == "expmrc":
                rec = record_from_passage(p)
                rec["evidences"] = [evidence_references(q, p.text) for q in sorted(p.questions, key=lambda q: q.index)]
                data.append(in_order(rec, p.extra.get("keys")))
                continue
            qs = [q for q in sorted(p.questions, key=lambda q: q.index) if has_evidence(q)]
            if not qs:
                continue
            moved = any(j != q.index for j, q in enumerate(qs))
            data.append({
                "id": f"{p.id}~{'.'.join(str(q.index) for q in qs)}" if moved else p.id,
                "article": p.text,
                "questions": [q.stem for q in qs],
                "options": [list(q.alternatives) for q in qs],
                "answers": [letter(q.key) if q.key is not None else "" for q in qs],
                "evidences": [evidence_references(q, p.text) for q in qs],
                "question_ids": [q.id for q in qs],
            })
    return data


def to_document(datasets: list[Dataset]) -> dict:
    top: dict[str, Any] = {}
    for ds in reversed(datasets):  # the first dataset's file-level values win
        top.update(ds.extra.get("top", {}))
    top.setdefault("version", "expmrc-race-dev" if not datasets else "expmrc")
    keys = next((ds.extra["keys"] for ds in datasets if ds.extra.get("keys")), None)
    return in_order({**top, "data": records(datasets)}, keys)


def read_predictions(path: str | os.PathLike, n_alternatives: dict[str, int] | int | None = None
                     ) -> dict[str, Prediction]:
    """An ExpMRC prediction file → {question id: Prediction}; model_id is the file's stem.

    The file gives only a letter, so `probabilities` is one-hot over the question's
    alternatives (`n_alternatives`, default 4 or enough to hold the letter).
    """
    file = str(path)
    doc = safe_read.load_json(path)
    if not isinstance(doc, dict):
        raise InputError(file, None, None, f"expected a JSON object of predictions, found {safe_read.type_name(doc)}")
    model_id = Path(path).stem
    out: dict[str, Prediction] = {}
    for qid, row in doc.items():
        safe_read.check_id(qid, file, repr(qid), "id")
        safe_read.check_type(row, "object", file, qid, None)
        answer = safe_read.get(row, "answer", "string", file, qid)
        evidence = row.get("evidence")
        safe_read.check_type(evidence, "string", file, qid, "evidence", nullable=True)
        letter_ = answer.strip().upper()
        if len(letter_) != 1 or letter_ not in LETTERS:
            raise InputError(file, qid, "answer", f"answer {answer!r} is not a letter")
        k = LETTERS.index(letter_)
        n = n_alternatives.get(qid, 4) if isinstance(n_alternatives, dict) else (n_alternatives or 4)
        if k >= max(n, 1) and n_alternatives is not None:
            raise InputError(file, qid, "answer", f"answer {answer!r} is out of range: only {n} alternatives")
        n = max(n, k + 1)
        out[qid] = Prediction(model_id=model_id, input_format="standard",
                              probabilities=[1.0 if i == k else 0.0 for i in range(n)], evidence=evidence,
                              extra={"answer": answer, **{k2: v for k2, v in row.items()
                                                          if k2 not in ("answer", "evidence")}})
    return out


def check_scorable(doc: Any, file: str) -> dict:
    """An ExpMRC dataset document as the official scorer reads it (`desktop.domain.expmrc_metric`):
    {"data": [{id, questions, answers, evidences?}]}, each list one entry per question and
    each evidences[j] a list of texts; the first thing that is not is an InputError naming
    record and field (the scorer itself would stop on a KeyError or TypeError)."""
    if not isinstance(doc, dict):
        raise InputError(file, None, None, f"expected a JSON object with 'data', found {safe_read.type_name(doc)}")
    data = safe_read.get(doc, "data", "list", file, None)
    for i, rec in enumerate(data):
        label = f"data[{i}]"
        safe_read.check_type(rec, "object", file, label, None)
        pid = safe_read.check_id(safe_read.get(rec, "id", "string or number", file, label), file, label)
        label = f"{label} (id {pid})"
        questions = safe_read.get(rec, "questions", "list", file, label)
        answers = safe_read.get(rec, "answers", "list", file, label)
        if len(answers) != len(questions):
            raise InputError(file, label, "answers", f"{len(answers)} answers for {len(questions)} questions")
        for j, answer in enumerate(answers):
            safe_read.check_type(answer, "string", file, label, f"answers[{j}]")
        evidences = rec.get("evidences")
        if evidences is None:
            continue  # no references: the scorer gives evidence F1 0, as it does for an empty list
        safe_read.check_type(evidences, "list", file, label, "evidences")
        if len(evidences) != len(questions):
            raise InputError(file, label, "evidences",
                             f"{len(evidences)} evidence lists for {len(questions)} questions")
        for j, refs in enumerate(evidences):
            safe_read.check_type(refs, "list", file, label, f"evidences[{j}]")
            for r, ref in enumerate(refs):
                safe_read.check_type(ref, "string", file, label, f"evidences[{j}][{r}]")
    return doc


def check_prediction_rows(doc: Any, file: str) -> dict:
    """An ExpMRC prediction document as the scorer reads it: {"<pid>-<j>": {"answer": text,
    "evidence": text (optional)}}; anything else is an InputError naming the id and field."""
    if not isinstance(doc, dict):
        raise InputError(file, None, None, 'predictions must map "<pid>-<j>" to {"answer", "evidence"}, '
                                           f"found {safe_read.type_name(doc)}")
    for qid, row in doc.items():
        safe_read.check_type(row, "object", file, qid, None)
        safe_read.get(row, "answer", "string", file, qid)
        if "evidence" in row:
            safe_read.check_type(row["evidence"], "string", file, qid, "evidence")
    return doc


def write_predictions(predictions: dict[str, Prediction], path: str | os.PathLike) -> None:
    doc = {}
    for qid, pred in predictions.items():
        row = {k: v for k, v in pred.extra.items() if k != "answer"}
        best = max(range(len(pred.probabilities)), key=pred.probabilities.__getitem__) if pred.probabilities else None
        row["answer"] = LETTERS[best] if best is not None else pred.extra.get("answer", "")
        row["evidence"] = pred.evidence or ""
        doc[qid] = row
    safe_read.write_text_atomic(path, json.dumps(doc, ensure_ascii=False))
