"""QuAIL: the dev XML (<data><text id domain><metadata/><text_body/><questions><q id type>
stem<a id correct>...</a></q></questions></text></data>) and the challenge JSONL; read-only.

"not enough information" alternatives go to `Question.unanswerable_alternatives`;
when the key is one of them the question is `unanswerable`.  Question ids follow
QuAIL's JSONL convention "<text id>_<j>" (j 0-based), so both files agree.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from desktop.domain.errors import InputError
from desktop.domain.model import ANSWERABLE, UNANSWERABLE, Dataset, Passage, Question

from . import safe_read

NOT_ENOUGH = "not enough information"
_DECLARATION = re.compile(r"<!(DOCTYPE|ENTITY)", re.IGNORECASE)


def _answerability(q: Question) -> None:
    q.unanswerable_alternatives = [i for i, a in enumerate(q.alternatives) if a.strip().lower() == NOT_ENOUGH]
    if q.key is not None:
        q.answerability = UNANSWERABLE if q.key in q.unanswerable_alternatives else ANSWERABLE


def read(path: str | os.PathLike, annotator: str | None = None) -> Dataset:
    p = Path(path)
    if p.suffix.lower() == ".xml":
        return read_xml(p)
    return read_jsonl(p)


def _xml_text(el) -> str:
    return (el.text or "").strip() if el is not None else ""


def read_xml(path: Path) -> Dataset:
    file = str(path)
    text = safe_read.read_text(path)
    # No DTDs at all: that rules out external entities and entity-expansion bombs.
    m = _DECLARATION.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise InputError(file, f"line {line}", None, "DOCTYPE/ENTITY declarations are not accepted")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        raise InputError(file, f"line {line}", None, f"invalid XML at column {col}: {exc}") from None
    ds = Dataset(source="quail", extra={"file": file, "format": "quail", "split": "dev"})
    seen = safe_read.IdRegistry(file, "text")
    for i, tx in enumerate(root.findall("text")):
        pid = tx.get("id")
        label = f"text {i}" + (f" (id {pid})" if pid else "")
        if not pid:
            raise InputError(file, label, "id", "missing attribute")
        safe_read.check_id(pid, file, label)
        body = tx.find("text_body")
        if body is None:
            raise InputError(file, label, "text_body", "missing element")
        meta = {el.tag: _xml_text(el) for el in (tx.find("metadata") if tx.find("metadata") is not None else [])}
        passage = Passage(id=pid, text=_xml_text(body), source="quail", split="dev",
                          extra={"domain": tx.get("domain"), "metadata": meta})
        questions = tx.find("questions")
        for j, q in enumerate(questions if questions is not None else []):
            f = f"questions/q[{j}]"
            alts, key = [], None
            for k, a in enumerate(q.findall("a")):
                alts.append(_xml_text(a))
                if (a.get("correct") or "").strip().lower() == "true":
                    if key is not None:
                        raise InputError(file, label, f"{f}/a[{k}]", "more than one correct alternative")
                    key = k
            safe_read.check_alternatives(alts, file, label, f"{f}/a")
            if key is None:
                raise InputError(file, label, f, "no alternative is marked correct=\"True\"")
            question = Question(id=f"{pid}_{j}", passage_id=pid, index=j, stem=_xml_text(q), alternatives=alts,
                                key=key, source="quail",
                                extra={"question_type": q.get("type"), "xml_id": q.get("id")})
            _answerability(question)
            passage.questions.append(question)
        if seen.add(pid, ET.tostring(tx), label):
            ds.passages.append(passage)
    if not ds.passages:
        raise InputError(file, None, "text", "no <text> elements under the root")
    return ds


def read_jsonl(path: Path) -> Dataset:
    """QuAIL JSONL: one question per line with its context; lines sharing context_id form one passage."""
    file = str(path)
    split = "challenge" if "challenge" in path.stem.lower() else None
    ds = Dataset(source="quail", extra={"file": file, "format": "quail", "split": split})
    passages: dict[str, Passage] = {}
    seen = safe_read.IdRegistry(file, "question")
    for n, rec in safe_read.iter_jsonl(path):
        label = f"line {n}"
        qid = safe_read.check_id(safe_read.get(rec, "id", "string or number", file, label), file, label)
        label = f"line {n} (id {qid})"
        cid = safe_read.check_id(safe_read.get(rec, "context_id", "string or number", file, label), file, label, "context_id")
        context = safe_read.get(rec, "context", "string", file, label)
        stem = safe_read.get(rec, "question", "string", file, label)
        alts = safe_read.check_alternatives(safe_read.get(rec, "answers", "list", file, label), file, label, "answers")
        raw_key = safe_read.get(rec, "correct_answer_id", "string or number", file, label)
        key = safe_read.index(raw_key, len(alts), file, label, "correct_answer_id")
        passage = passages.get(cid)
        if passage is None:
            passage = passages[cid] = Passage(id=cid, text=context, source="quail", split=split,
                                              extra={"domain": rec.get("domain"), "metadata": rec.get("metadata")})
            ds.passages.append(passage)
        elif passage.text != context:
            raise InputError(file, label, "context", f"context {cid!r} differs from its earlier lines")
        if not seen.add(qid, rec, label):
            continue
        question = Question(id=qid, passage_id=cid, index=len(passage.questions), stem=stem, alternatives=alts,
                            key=key, source="quail",
                            extra={"question_type": rec.get("question_type"),
                                   "correct_answer_id": raw_key})
        _answerability(question)
        passage.questions.append(question)
    return ds
