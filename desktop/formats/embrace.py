"""EMBRACE JSONL: one line per text {id, race_file, text, flags, test: [question records]}.

A question record is {id, num, mcq {stem, choices ["(A) ..."], key}, annotations
{difficulty, bases {a..d}, problems, comments, other_problems, required_paragraphs},
flags?}.  Bases become basis spans, required_paragraphs a required span, the
difficulty dict an Assessment and problems/flags ProblemTags (through
`embrace_vocab`, which owns the mapping of EMBRACE strings to the domain).

Lossless: the original text record (minus text and test) is kept in
`passage.extra["embrace"]`, the original question record in `question.extra["embrace"]`,
the choice prefixes ("(A) ") in `question.extra["choice_prefixes"]`, each basis'
marker in `span.extra`, the raw difficulty dict in `assessment.extra["embrace_difficulty"]`.
The writer starts from those originals and overlays what the domain objects say.
"""
from __future__ import annotations

import os
from typing import Any, Iterator

from desktop.domain.errors import InputError
from desktop.domain.model import (
    BASIS, DEFAULT_ANNOTATOR, IMPORTED, LETTERS, REQUIRED, Assessment, Dataset, Passage, Question, Span,
)

from . import embrace_fields as F
from . import safe_read
# the writer, named here beside the reader (`formats.write("embrace", ...)` calls embrace.write)
from .embrace_write import passage_record, question_record, write  # noqa: F401


def _level_split(race_file: Any) -> tuple[str | None, str | None]:
    if not isinstance(race_file, str):
        return None, None
    parts = race_file.replace("\\", "/").lower().split("/")
    level = next((p for p in parts if p in ("high", "middle")), None)
    split = next((p for p in parts if p in ("train", "dev", "test")), None)
    return level, split


# ---------------------------------------------------------------------------- reading

def read(path: str | os.PathLike, annotator: str | None = None) -> Dataset:
    ds = header(path)
    ds.passages = list(passages(path, ds, annotator))
    return ds


def header(path: str | os.PathLike) -> Dataset:
    """The Dataset of a file without its passages (`passages` fills in its extras)."""
    return Dataset(source="embrace", extra={"file": str(path), "format": "embrace", "warnings": []})


def passages(path: str | os.PathLike, ds: Dataset, annotator: str | None = None) -> Iterator[Passage]:
    """The texts of an EMBRACE file, one line at a time (see `race.passages`); warnings and the
    file's JSON style go into `ds.extra`."""
    file = str(path)
    annotator = annotator or DEFAULT_ANNOTATOR
    texts = safe_read.IdRegistry(file, "text")
    questions = safe_read.IdRegistry(file, "question")
    style: dict = {}
    ds.extra["json_style"] = style  # written back the same way: an unedited export is byte-identical
    n_texts = 0
    for n, rec in safe_read.iter_jsonl(path, style):
        passage = _passage(rec, file, n, annotator, ds.extra["warnings"])
        if not texts.add(passage.id, rec, f"line {n}"):
            continue
        for q in passage.questions:
            questions.add(q.id, q.extra["embrace"], f"line {n}, question {q.id}")
        n_texts += 1
        yield passage
    if not n_texts:
        raise InputError(file, None, None, "no EMBRACE records in the file")


def _passage(rec: dict, file: str, n: int, annotator: str, warnings: list) -> Passage:
    label = f"line {n}"
    pid = safe_read.get(rec, "id", "string or number", file, label)
    safe_read.check_id(pid, file, label)
    label = f"line {n} (id {pid})"
    text = safe_read.get(rec, "text", "string", file, label)
    test = safe_read.get(rec, "test", "list", file, label)
    flags = rec.get("flags")
    safe_read.check_type(flags, "object", file, label, "flags", nullable=True)
    level, split = _level_split(rec.get("race_file"))
    passage = Passage(id=str(pid), text=text, source="embrace", level=level, split=split,
                      extra={"embrace": {k: v for k, v in rec.items() if k not in ("text", "test")},
                             "keys": list(rec)})
    for j, qrec in enumerate(test):
        passage.questions.append(_question(qrec, j, passage, flags or {}, file, n, annotator, warnings))
    return passage


def _question(qrec: Any, j: int, passage: Passage, text_flags: dict, file: str, n: int,
              annotator: str, warnings: list) -> Question:
    f = f"test[{j}]"
    if not isinstance(qrec, dict):
        raise InputError(file, f"line {n}", f, f"expected an object, found {safe_read.type_name(qrec)}")
    qid = safe_read.check_id(safe_read.get(qrec, "id", "string or number", file, f"line {n}", f"{f}."), file, f"line {n}",
                       f"{f}.id")
    label = f"line {n}, question {qid}"
    mcq = safe_read.get(qrec, "mcq", "object", file, label, f"{f}.")
    stem = safe_read.get(mcq, "stem", "string", file, label, f"{f}.mcq.")
    choices = safe_read.check_alternatives(safe_read.get(mcq, "choices", "list", file, label, f"{f}.mcq."),
                                     file, label, f"{f}.mcq.choices")
    prefixes, alternatives, by_label = [], [], {}
    for i, choice in enumerate(choices):
        m = F.PREFIX.match(choice)
        prefix = m.group(0) if m else ""
        if m:
            by_label.setdefault(m.group(1).upper(), i)
        prefixes.append(prefix)
        alternatives.append(choice[len(prefix):])
    raw_key = safe_read.get(mcq, "key", "string", file, label, f"{f}.mcq.")
    safe_read.key_from_letter(raw_key, len(choices), file, label, f"{f}.mcq.key")
    key = by_label.get(raw_key.strip().upper(), LETTERS.index(raw_key.strip().upper()))

    ann = safe_read.get(qrec, "annotations", "object", file, label, f"{f}.")
    q = Question(id=qid, passage_id=passage.id, index=j, stem=stem, alternatives=alternatives, key=key,
                 source="embrace", extra={"embrace": qrec, "choice_prefixes": prefixes})

    bases = ann.get("bases")
    safe_read.check_type(bases, "object", file, label, f"{f}.annotations.bases", nullable=True)
    for letter_, b in (bases or {}).items():
        field = f"{f}.annotations.bases.{letter_}"
        if b is None:
            continue
        if len(letter_) != 1 or letter_.upper() not in LETTERS:
            raise InputError(file, label, field, "a basis key must be one alternative letter (a-e)")
        alt = by_label.get(letter_.upper(), LETTERS.index(letter_.upper()))
        if alt >= len(alternatives):
            raise InputError(file, label, field, f"basis for alternative {letter_} but only "
                             f"{len(alternatives)} alternatives")
        q.spans.append(_span(b, passage.text, file, label, field, BASIS, alt, annotator, letter_))
    rp = ann.get("required_paragraphs")
    if rp is not None:
        q.spans.append(_span(rp, passage.text, file, label, f"{f}.annotations.required_paragraphs",
                             REQUIRED, None, annotator, None))

    # checked before the difficulty: the text format is read from the problems
    for key_ in ("problems", "flags"):
        safe_read.check_type(ann.get(key_) if key_ == "problems" else qrec.get(key_), "object", file, label,
                       f"{f}.annotations.problems" if key_ == "problems" else f"{f}.flags", nullable=True)
    raw = ann.get("difficulty")
    safe_read.check_type(raw, "object", file, label, f"{f}.annotations.difficulty", nullable=True)
    if raw is not None:
        try:
            values, unknown = F.parse_difficulty(raw)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(file, label, f"{f}.annotations.difficulty", f"cannot read: {exc}") from None
        for k in unknown:
            warnings.append({"level": "warning", "file": file, "record": qid,
                             "field": f"{f}.annotations.difficulty.{k}",
                             "message": f"unknown value {raw[k]!r}: kept as written, not on the scale"})
        try:
            fmt = F.text_format(qrec)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(file, label, f"{f}.annotations.problems", f"cannot read: {exc}") from None
        q.assessments.append(Assessment(values=values, annotator=annotator, extra={"embrace_difficulty": raw},
                                        text_format=fmt.get("text_format"),
                                        multiple_texts=fmt.get("multiple_texts"), unit_type=fmt.get("unit_type")))
    comments = ann.get("comments", [])
    safe_read.check_type(comments, "list", file, label, f"{f}.annotations.comments")
    for i, c in enumerate(comments):
        safe_read.check_type(c, "string", file, label, f"{f}.annotations.comments[{i}]")
    q.comments = list(comments)
    try:
        q.problems = F.parse_problems(text_flags, qrec)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(file, label, f"{f}.annotations.problems", f"cannot read: {exc}") from None
    for t in q.problems:
        if t.origin == IMPORTED:
            t.annotator = annotator
    return q


def _span(b: Any, text: str, file: str, label: str, field: str, role: str, alt: int | None,
          annotator: str, letter_: str | None) -> Span:
    safe_read.check_type(b, "object", file, label, field)
    for k in ("start", "end", "text"):
        if k not in b:
            raise InputError(file, label, f"{field}.{k}", "missing key")
    start, end = safe_read.check_span(text, b["start"], b["end"], file, label, field)
    safe_read.check_type(b["text"], "string", file, label, f"{field}.text")
    if text[start:end] != b["text"]:
        raise InputError(file, label, f"{field}.text",
                         f"text does not match the passage at offsets {start}..{end}: "
                         f"file has {_short(b['text'])}, passage has {_short(text[start:end])}")
    return Span(start=start, end=end, role=role, alternative=alt, annotator=annotator, origin=IMPORTED,
                extra={"letter": letter_, "located": [start, end],
                       "record": {k: v for k, v in b.items() if k not in ("start", "end", "text")}})


def _short(s: str, n: int = 40) -> str:
    return repr(s if len(s) <= n else s[:n] + "…")
