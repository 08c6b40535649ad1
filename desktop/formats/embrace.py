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

import copy
import json
import os
import re
from pathlib import Path
from typing import Any, Iterator

from desktop.domain import resolve
from desktop.domain.errors import InputError
from desktop.domain.model import (
    BASIS, DEFAULT_ANNOTATOR, IMPORTED, LETTERS, REQUIRED, Assessment, Dataset, Passage, ProblemTag,
    Question, Span,
)

from . import safe_read
from .race import in_order

_PREFIX = re.compile(r"^\(([A-Za-z])\) ?")


def _vocab():
    """The difficulty engineer's mapping module, imported late so this module loads without it."""
    try:
        from . import embrace_vocab
    except ImportError:
        return None
    return embrace_vocab


def _normal(value: Any) -> Any:
    """JSON-normalised copy, so values that went through the store compare equal to fresh ones."""
    return json.loads(json.dumps(value, sort_keys=True, default=list))


def parse_difficulty(raw: dict | None) -> tuple[dict, list[str]]:
    """(values, raw keys whose strings the vocabulary does not know).

    EMBRACE files outside this release may hold strings the vocabulary lacks; those
    keys stay in the raw dict (and so in the export) instead of refusing the file."""
    vocab = _vocab()
    if raw is None or vocab is None or not hasattr(vocab, "parse_difficulty"):
        return {}, []
    known, unknown = dict(raw), []
    while True:
        try:
            return vocab.parse_difficulty(known), unknown
        except ValueError as exc:
            key = str(getattr(exc, "field", "")).split(".", 1)[-1]
            if key not in known:
                raise
            unknown.append(key)
            del known[key]


def unparse_difficulty(values: dict, raw: dict | None) -> dict | None:
    _, unknown = parse_difficulty(raw)
    known = {k: v for k, v in (raw or {}).items() if k not in unknown}
    out = _vocab().unparse_difficulty(values, known)
    if out is None:
        return None
    out = dict(out)
    for k in unknown:  # the unknown strings stay unless the edit wrote that field anew
        out.setdefault(k, raw[k])
    return out


def parse_problems(text_flags: dict, qrec: dict) -> list[ProblemTag]:
    vocab = _vocab()
    if vocab is None:
        return []
    fn = getattr(vocab, "problems_from_embrace", None) or getattr(vocab, "parse_problems", None)
    return list(fn(text_flags, qrec)) if fn else []


def text_format(qrec: dict) -> dict:
    vocab = _vocab()
    fn = getattr(vocab, "text_format_from_embrace", None)
    return fn(qrec) if fn else {}


def _tag_key(tags: list[ProblemTag]) -> list:
    return sorted(_normal([t.type, t.element, t.note, t.alternative, t.start, t.end]) for t in tags)


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
        m = _PREFIX.match(choice)
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
            values, unknown = parse_difficulty(raw)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(file, label, f"{f}.annotations.difficulty", f"cannot read: {exc}") from None
        for k in unknown:
            warnings.append({"level": "warning", "file": file, "record": qid,
                             "field": f"{f}.annotations.difficulty.{k}",
                             "message": f"unknown value {raw[k]!r}: kept as written, not on the scale"})
        try:
            fmt = text_format(qrec)
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
        q.problems = parse_problems(text_flags, qrec)
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


# ---------------------------------------------------------------------------- writing

def _span_record(span: Span, text: str, default_marker: dict) -> dict:
    rec = copy.deepcopy(span.extra.get("record") or {"marker": default_marker})
    rec.update({"text": text[span.start:span.end], "start": span.start, "end": span.end})
    return rec


def question_record(q: Question, passage: Passage, text_flags: dict, annotator: str | None = None
                    ) -> tuple[dict, dict | None]:
    """(question record, this question's view of the text flags, None when its problems are unchanged).

    The annotations written are the item's layers resolved as the window shows them
    (`desktop.domain.resolve.item`, `annotator` on top)."""
    shown = resolve.item(q, annotator)
    original = q.extra.get("embrace") or {}
    qrec = copy.deepcopy(original) if original else {"id": q.id}
    prefixes = list(q.extra.get("choice_prefixes") or [])
    prefixes += [f"({LETTERS[i]}) " for i in range(len(prefixes), len(q.alternatives))]
    mcq = qrec.setdefault("mcq", {})
    mcq["stem"] = q.stem
    mcq["choices"] = [p + a for p, a in zip(prefixes, q.alternatives)]
    labels = [(_PREFIX.match(p).group(1) if _PREFIX.match(p) else LETTERS[i]) for i, p in enumerate(prefixes)]
    old_key = mcq.get("key")
    if q.key is None:
        mcq["key"] = old_key
    else:
        label = labels[q.key]
        # keep the original spelling of the key when it still names the same alternative
        mcq["key"] = old_key if isinstance(old_key, str) and old_key.strip().upper() == label.upper() else label
    ann = qrec.setdefault("annotations", {})

    # bases: one per letter, in the original letters (a..d), extended for new alternatives
    old_bases = ann.get("bases") if isinstance(ann.get("bases"), dict) else {}
    letters = list(old_bases) or [LETTERS[i].lower() for i in range(len(q.alternatives))]
    index_of_letter = {}
    for L in letters:
        index_of_letter[L] = labels.index(L.upper()) if L.upper() in labels else LETTERS.index(L.upper())
    for i in range(len(q.alternatives)):
        if i not in index_of_letter.values() and i in shown.bases:
            letters.append(labels[i].lower())
            index_of_letter[labels[i].lower()] = i
    bases: dict[str, Any] = {}
    for L in letters:
        i = index_of_letter[L]
        span = shown.bases.get(i)
        bases[L] = None if span is None else _span_record(
            span, passage.text, {"name": f"Basis for {L.upper()}", "order": 6 + i})
    if "bases" in ann or any(v is not None for v in bases.values()):
        ann["bases"] = bases

    rp = shown.required
    if rp is not None:
        ann["required_paragraphs"] = _span_record(rp, passage.text, {"name": "Required paragraphs", "order": 11})
    else:
        ann.pop("required_paragraphs", None)

    raw = ann.get("difficulty")
    if shown.assessed:
        # the imported record beneath the layers, rewritten where the resolved values differ:
        # a later annotator's NI over the imported TOM, TOI, POD, ... keeps all of them
        raw = shown.raw_difficulty if shown.raw_difficulty is not None else raw
        if _normal(shown.values) != _normal(parse_difficulty(raw)[0]):
            raw = unparse_difficulty(shown.values, copy.deepcopy(raw or {}))
        raw = copy.deepcopy(raw)
    if isinstance(raw, dict):
        for L, b in bases.items():
            if b is None:
                raw.pop(f"{L}_base_s", None)
                raw.pop(f"{L}_base_e", None)
            else:
                raw[f"{L}_base_s"], raw[f"{L}_base_e"] = b["start"], b["end"]
        if "key" in raw:
            raw["key"] = mcq["key"]
        ann["difficulty"] = raw

    if shown.comments or "comments" in ann:
        ann["comments"] = list(shown.comments)

    # Problems: compared with what the original record gives, so an unedited question is
    # left exactly as it was.  Text-level flags are shared by the passage's questions:
    # each changed question returns its view of them and `passage_record` merges the views.
    text_view = None
    parsed = parse_problems(text_flags, original) if original else []
    if _tag_key(q.problems) != _tag_key(parsed):
        vocab = _vocab()
        fn = getattr(vocab, "problems_to_embrace", None) or getattr(vocab, "unparse_problems")
        text_view, updates = fn(q.problems, copy.deepcopy(text_flags), copy.deepcopy(qrec))
        for k, v in (updates or {}).items():
            if k == "flags":  # question-level flags live on the record, not in annotations
                if v:
                    qrec["flags"] = v
                else:
                    qrec.pop("flags", None)
            else:
                ann[k] = v
    if shown.text_format is not None:
        vocab = _vocab()
        fn = getattr(vocab, "text_format_to_embrace", None)
        if fn is not None and isinstance(ann.get("problems"), dict):
            ann["problems"]["complex"] = fn(shown.text_format, shown.multiple_texts, qrec)
    return qrec, text_view


def _merge_text_flags(original: dict, views: list[dict | None]) -> dict:
    """One passage's text flags from the views of its edited questions: what any view
    removed goes, what any view added comes (once), the rest keeps its place."""
    views = [v or {} for v in views]
    if not views:
        return copy.deepcopy(original)
    out: dict[str, Any] = {}
    for field in dict.fromkeys(list(original) + [f for v in views for f in v]):
        orig = original.get(field)
        orig_list = [orig] if isinstance(orig, str) else list(orig or [])
        keep = [x for x in orig_list if all(x in _as_list(v.get(field)) for v in views)]
        added = [x for v in views for x in _as_list(v.get(field)) if x not in orig_list]
        values = keep + list(dict.fromkeys(added))
        if isinstance(orig, str) and len(values) == 1:
            out[field] = values[0]
        elif values or (field in original and not orig_list):
            out[field] = values
    return out


def _as_list(v: Any) -> list:
    return [] if v is None else [v] if isinstance(v, str) else list(v)


def passage_record(passage: Passage, annotator: str | None = None) -> dict:
    rec = copy.deepcopy(passage.extra.get("embrace") or {"id": passage.id})
    original_flags = rec.get("flags")
    text_flags = copy.deepcopy(original_flags) if isinstance(original_flags, dict) else {}
    test, views = [], []
    for q in sorted(passage.questions, key=lambda q: q.index):
        qrec, view = question_record(q, passage, text_flags, annotator)
        test.append(qrec)
        if view is not None and view != text_flags:
            views.append(view)
    text_flags = _merge_text_flags(text_flags, views) if views else text_flags
    if isinstance(original_flags, dict) or text_flags:
        rec["flags"] = text_flags
    rec["text"] = passage.text
    rec["test"] = test
    return in_order(rec, passage.extra.get("keys"))


def write(datasets: Dataset | list[Dataset], path: str | os.PathLike, annotator: str | None = None) -> None:
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    style = next((ds.extra["json_style"] for ds in datasets if ds.extra.get("json_style")), None)
    lines = [safe_read.dumps_line(passage_record(p, annotator), style) for ds in datasets for p in ds.passages]
    end = "\n" if (style or {}).get("final_newline", True) else ""
    safe_read.write_text_atomic(Path(path), "\n".join(lines) + end if lines else "")
