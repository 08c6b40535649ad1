"""Write NOTA-transformed copies as RACE, with what the transform did beside each question.

RACE keeps questions as lists parallel to `questions` inside one passage object, so
the per-question NOTA fields are lists too: `answerable`, `replaced` (letter),
`replaced_text`.  The RACE writer (`desktop.formats.race`) starts every record from
`passage.extra["record"]`, so these fields travel through it and come back, unknown
but intact, when the file is read again.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from desktop.domain.model import Dataset, Passage, letter
from desktop.domain.nota import is_training_split
from desktop.formats import race

_RACE_LIKE = ("race", "expmrc")  # sources whose passage.extra["record"] is a RACE record


def _with_fields(p: Passage, suffix: str) -> Passage:
    if p.source not in _RACE_LIKE:
        # other readers keep their own originals in extra; a RACE record starts empty
        p.extra = {"record": {}, "id_in_record": True, "id_value": p.id}
    rec = dict(p.extra.get("record", {}))
    qs = sorted(p.questions, key=lambda q: q.index)
    metas = [q.extra["nota"] for q in qs]
    rec["answerable"] = [m["answerable"] for m in metas]
    rec["replaced"] = [letter(m["replaced"]) for m in metas]
    rec["replaced_text"] = [m["original"] for m in metas]
    first = metas[0] if metas else {}
    rec["nota"] = {k: first.get(k) for k in ("c", "seed", "replica", "text")}
    if p.split:
        rec["split"] = p.split
    if p.level:
        rec["level"] = p.level
    if suffix:
        rec["nota"]["original_id"] = p.id
        p.id = f"{p.id}{suffix}"
        for q in p.questions:
            q.passage_id, q.id = p.id, f"{p.id}-{q.index}"
        if "file" in p.extra:
            f = Path(p.extra["file"])
            p.extra["file"] = f.with_name(f"{f.stem}{suffix}{f.suffix}").as_posix()
    p.extra["record"] = rec
    p.extra["id_in_record"] = True  # a list or JSONL record without its id could not be read back
    if p.extra.get("id_value") is None:
        p.extra["id_value"] = p.id
    return p


def write_race(copies: Sequence[Sequence[Passage]], path: str | Path) -> int:
    """Write every copy into one RACE output; returns the number of questions written."""
    several = len(copies) > 1
    out: list[Passage] = []
    for r, passages in enumerate(copies, 1):
        for p in passages:
            suffix = f".r{r}" if several and not is_training_split(p.split) else ""
            out.append(_with_fields(p, suffix))
    race.write(Dataset(source="race", passages=out), path)
    return sum(len(p.questions) for p in out)
