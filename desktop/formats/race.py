"""RACE: one JSON object per passage {id, article, questions, options, answers}.

Accepted layouts: RACE's own folder of .txt files (each one JSON object, the file
name is the id when the object has none), a single such object, a JSON list of
them, or JSONL.  Question ids are "<passage id>-<j>", j 0-based.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from desktop.domain.errors import InputError
from desktop.domain.model import Dataset, Passage, Question, letter

from . import _io

KNOWN = ("id", "article", "questions", "options", "answers")


def _level_split(path: Path) -> tuple[str | None, str | None]:
    parts = [p.lower() for p in path.parts]
    level = next((p for p in reversed(parts) if p in ("high", "middle")), None)
    split = next((p for p in reversed(parts) if p in ("train", "dev", "test")), None)
    return level, split


def passage_from_record(rec: Any, file: str, record: str, source: str = "race",
                        default_id: str | None = None) -> Passage:
    """One RACE-style record → Passage.  Shared with ExpMRC, whose records have the same core."""
    if not isinstance(rec, dict):
        raise InputError(file, record, None, f"expected a JSON object, found {_io.type_name(rec)}")
    if "id" in rec:
        pid = _io.check_type(rec["id"], "string or number", file, record, "id")
    elif default_id is not None:
        pid = default_id
    else:
        raise InputError(file, record, "id", "missing key")
    pid = str(pid)
    record = f"{record} (id {pid})" if pid not in record else record
    article = _io.get(rec, "article", "string", file, record)
    stems = _io.get(rec, "questions", "list", file, record)
    options = _io.get(rec, "options", "list", file, record)
    answers = _io.get(rec, "answers", "list", file, record)
    if not (len(stems) == len(options) == len(answers)):
        raise InputError(file, record, "questions/options/answers",
                         f"lengths differ: {len(stems)} questions, {len(options)} option lists, "
                         f"{len(answers)} answers")
    passage = Passage(id=pid, text=article, source=source,
                      extra={"record": {k: v for k, v in rec.items() if k not in KNOWN},
                             "id_in_record": "id" in rec, "id_value": rec.get("id")})
    for j, (stem, alts, answer) in enumerate(zip(stems, options, answers)):
        _io.check_type(stem, "string", file, record, f"questions[{j}]")
        alts = _io.check_alternatives(alts, file, record, f"options[{j}]")
        key = _io.key_from_letter(answer, len(alts), file, record, f"answers[{j}]")
        passage.questions.append(Question(
            id=f"{pid}-{j}", passage_id=pid, index=j, stem=stem, alternatives=list(alts), key=key,
            source=source, extra={"answer": answer}))
    return passage


def record_from_passage(passage: Passage) -> dict:
    """Inverse of `passage_from_record` for the RACE core; unknown keys come back from extra."""
    rec = dict(passage.extra.get("record", {}))
    if passage.extra.get("id_in_record", True):
        original = passage.extra.get("id_value")
        # an id that was a number in the file stays a number
        rec["id"] = original if str(original) == passage.id else passage.id
    rec["article"] = passage.text
    qs = sorted(passage.questions, key=lambda q: q.index)
    rec["questions"] = [q.stem for q in qs]
    rec["options"] = [list(q.alternatives) for q in qs]
    rec["answers"] = [_answer(q) for q in qs]
    return rec


def _answer(q: Question) -> Any:
    original = q.extra.get("answer")
    if q.key is None:
        return original if original is not None else ""
    # keep the original spelling ("c", " C") when it still names the same alternative
    if isinstance(original, str) and original.strip().upper() == letter(q.key):
        return original
    return letter(q.key)


def _records(path: Path) -> Iterable[tuple[Any, str, str | None]]:
    """(record, record label, id from file name) for one file."""
    file = str(path)
    text = _io.read_text(path)
    if path.suffix.lower() == ".jsonl" or _several_values(text):
        for n, obj in _io.iter_jsonl(path):
            yield obj, f"line {n}", None
        return
    data = _io.loads(text, file)
    if isinstance(data, list):
        for i, obj in enumerate(data):
            yield obj, f"item {i}", None
    elif isinstance(data, dict):
        yield data, path.name, path.name
    else:
        raise InputError(file, None, None, f"expected a JSON object or list, found {_io.type_name(data)}")


def _several_values(text: str) -> bool:
    """JSONL under another extension: the first line is a whole JSON value and more follows."""
    import json
    try:
        json.loads(text)
        return False
    except json.JSONDecodeError as exc:
        return exc.msg == "Extra data"
    except (ValueError, RecursionError):
        return False


def read(path: str | os.PathLike, annotator: str | None = None) -> Dataset:
    """A RACE file or folder → Dataset (annotator is unused: RACE carries no annotations)."""
    p = Path(path)
    files = _folder_files(p) if p.is_dir() else [p]
    if not files:
        raise InputError(str(p), None, None, "no .txt, .json or .jsonl files in the folder")
    ds = Dataset(source="race", extra={"file": str(p), "format": "race",
                                       "layout": "folder" if p.is_dir() else _layout(p)})
    seen = _io.IdRegistry(str(p), "passage")
    for f in files:
        level, split = _level_split(f.relative_to(p) if p.is_dir() else f)
        for rec, label, name_id in _records(f):
            passage = passage_from_record(rec, str(f), label, default_id=name_id)
            if p.is_dir():
                passage.extra["file"] = f.relative_to(p).as_posix()
            passage.level, passage.split = level, split
            if seen.add(passage.id, rec, f"{f.name} {label}"):
                ds.passages.append(passage)
    return ds


def _layout(p: Path) -> str:
    if p.suffix.lower() == ".jsonl":
        return "jsonl"
    return "list" if _io.read_text(p).lstrip().startswith("[") else "object"


def _folder_files(folder: Path) -> list[Path]:
    from . import walk
    return [f for f in walk(folder) if f.suffix.lower() in (".txt", ".json", ".jsonl")]


def write(datasets: Dataset | list[Dataset], path: str | os.PathLike) -> None:
    """Write passages as RACE: a folder → one .txt per passage, .jsonl → lines, else a JSON list."""
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    passages = [p for ds in datasets for p in ds.passages]
    out = Path(path)
    if out.suffix.lower() == ".jsonl":
        _io.write_text_atomic(out, "".join(_io.dumps_line(record_from_passage(p)) + "\n" for p in passages))
    elif out.suffix == "" or out.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        for p in passages:
            name = p.extra.get("file") or f"{p.id}.txt"
            target = (out / name).resolve()
            if out.resolve() not in target.parents:  # a stored name must not escape the folder
                target = out / f"{Path(name).name}"
            _io.write_text_atomic(target, _io.dumps_line(record_from_passage(p)))
    else:
        import json
        _io.write_text_atomic(out, json.dumps([record_from_passage(p) for p in passages], ensure_ascii=False))
