"""DREAM: a JSON list of [[turns], [{question, choice[3], answer}], id]; read-only.

The dialogue turns are joined with "\n" into the passage (so each turn is one
paragraph), the key is the index of the answer text among the choices, and the
split (train/dev/test) comes from the file name.
"""
from __future__ import annotations

import os
from pathlib import Path

from desktop.domain.errors import InputError
from desktop.domain.model import Dataset, Passage, Question

from . import safe_read


def read(path: str | os.PathLike, annotator: str | None = None) -> Dataset:
    file = str(path)
    doc = safe_read.load_json(path)
    if not isinstance(doc, list):
        raise InputError(file, None, None, f"expected a JSON list of dialogues, found {safe_read.type_name(doc)}")
    stem = Path(path).stem.lower()
    split = next((s for s in ("train", "dev", "test") if s in stem), None)
    ds = Dataset(source="dream", extra={"file": file, "format": "dream"})
    seen = safe_read.IdRegistry(file, "dialogue")
    for i, item in enumerate(doc):
        label = f"item {i}"
        if not isinstance(item, list) or len(item) != 3:
            raise InputError(file, label, None, "expected [turns, questions, id]")
        turns, questions, pid = item
        safe_read.check_id(pid, file, label, "[2] (id)")
        label = f"item {i} (id {pid})"
        safe_read.check_type(turns, "list", file, label, "[0] (turns)")
        for t, turn in enumerate(turns):
            safe_read.check_type(turn, "string", file, label, f"[0][{t}]")
        safe_read.check_type(questions, "list", file, label, "[1] (questions)")
        passage = Passage(id=str(pid), text="\n".join(turns), source="dream", split=split)
        for j, qrec in enumerate(questions):
            f = f"[1][{j}]"
            safe_read.check_type(qrec, "object", file, label, f)
            stem_ = safe_read.get(qrec, "question", "string", file, label, f"{f}.")
            choices = safe_read.check_alternatives(safe_read.get(qrec, "choice", "list", file, label, f"{f}."),
                                             file, label, f"{f}.choice")
            answer = safe_read.get(qrec, "answer", "string", file, label, f"{f}.")
            if answer not in choices:
                raise InputError(file, label, f"{f}.answer", f"answer {answer!r} is not one of the choices")
            passage.questions.append(Question(
                id=f"{pid}-{j}", passage_id=str(pid), index=j, stem=stem_, alternatives=list(choices),
                key=choices.index(answer), source="dream",
                extra={k: v for k, v in qrec.items() if k not in ("question", "choice", "answer")}))
        if seen.add(pid, item, label):
            ds.passages.append(passage)
    return ds
