"""RACE: one JSON object per passage {id, article, questions, options, answers}.

Accepted layouts: RACE's own folder of .txt files (each one JSON object, the file
name is the id when the object has none), a single such object, a JSON list of
them, or JSONL.  Question ids are "<passage id>-<j>", j 0-based.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from desktop.domain.errors import InputError
from desktop.domain.model import Dataset, Passage, Question, letter

from . import safe_read
from .folders import walk

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
        raise InputError(file, record, None, f"expected a JSON object, found {safe_read.type_name(rec)}")
    if "id" in rec:
        pid = safe_read.check_id(rec["id"], file, record, "id")
    elif default_id is not None:
        pid = default_id
    else:
        raise InputError(file, record, "id", "missing key")
    pid = str(pid)
    record = f"{record} (id {pid})" if pid not in record else record
    article = safe_read.get(rec, "article", "string", file, record)
    stems = safe_read.get(rec, "questions", "list", file, record)
    options = safe_read.get(rec, "options", "list", file, record)
    answers = safe_read.get(rec, "answers", "list", file, record)
    if not (len(stems) == len(options) == len(answers)):
        raise InputError(file, record, "questions/options/answers",
                         f"lengths differ: {len(stems)} questions, {len(options)} option lists, "
                         f"{len(answers)} answers")
    passage = Passage(id=pid, text=article, source=source,
                      extra={"record": {k: v for k, v in rec.items() if k not in KNOWN},
                             "id_in_record": "id" in rec, "id_value": rec.get("id"), "keys": list(rec)})
    for j, (stem, alts, answer) in enumerate(zip(stems, options, answers)):
        safe_read.check_type(stem, "string", file, record, f"questions[{j}]")
        alts = safe_read.check_alternatives(alts, file, record, f"options[{j}]")
        # "" is a question without key (an unlabelled split; what the writer writes for one)
        key = None if answer == "" else safe_read.key_from_letter(answer, len(alts), file, record, f"answers[{j}]")
        passage.questions.append(Question(
            id=f"{pid}-{j}", passage_id=pid, index=j, stem=stem, alternatives=list(alts), key=key,
            source=source, extra={"answer": answer}))
    return passage


def record_from_passage(passage: Passage) -> dict:
    """Inverse of `passage_from_record` for the RACE core; unknown keys come back from extra."""
    rec = dict(passage.extra.get("record", {}))
    if passage.extra.get("id_in_record", True):
        original = passage.extra.get("id_value")
        # an id that was a number in the file stays a number; a readable id derived from
        # RACE's own ("test/high/10024" for "high10024.txt") writes the file's id back
        same = str(original) == passage.id or passage.extra.get("readable_id") == passage.id
        rec["id"] = original if same else passage.id
    rec["article"] = passage.text
    qs = sorted(passage.questions, key=lambda q: q.index)
    rec["questions"] = [q.stem for q in qs]
    rec["options"] = [list(q.alternatives) for q in qs]
    rec["answers"] = [_answer(q) for q in qs]
    return in_order(rec, passage.extra.get("keys"))


def in_order(rec: dict, keys: list | None) -> dict:
    """The record with its keys in the file's order (keys the file did not have after them)."""
    if not keys:
        return rec
    out = {k: rec[k] for k in keys if k in rec}
    out.update((k, v) for k, v in rec.items() if k not in out)
    return out


def _answer(q: Question) -> Any:
    original = q.extra.get("answer")
    if q.key is None:
        return original if original is not None else ""
    # keep the original spelling ("c", " C") when it still names the same alternative
    if isinstance(original, str) and original.strip().upper() == letter(q.key):
        return original
    return letter(q.key)


def _records(path: Path, text: str) -> Iterable[tuple[Any, str, str | None]]:
    """(record, record label, id from file name) for one file."""
    file = str(path)
    if path.suffix.lower() == ".jsonl" or _several_values(text):
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            obj = safe_read.loads(line, file, f"line {n}")
            if not isinstance(obj, dict):
                raise InputError(file, f"line {n}", None, f"expected a JSON object, found {safe_read.type_name(obj)}")
            yield obj, f"line {n}", None
        return
    data = safe_read.loads(text, file)
    if isinstance(data, list):
        for i, obj in enumerate(data):
            yield obj, f"item {i}", None
    elif isinstance(data, dict):
        yield data, path.name, path.name
    else:
        raise InputError(file, None, None, f"expected a JSON object or list, found {safe_read.type_name(data)}")


def _several_values(text: str) -> bool:
    """JSONL under another extension: the first line is a whole JSON value and more follows."""
    first = text.lstrip().split("\n", 1)
    if len(first) < 2 or not first[1].strip():
        return False
    try:
        json.loads(first[0])
        return True
    except (ValueError, RecursionError):
        return False


_NUMBERED = re.compile(r"^([0-9]+)\.txt$")  # ASCII digits, as `values.whole_number`


def readable_id(path: Path, record_id: Any) -> str | None:
    """RACE's own naming as an id a person can read: "test/high/10024" for test/high/10024.txt.

    Only for a file in RACE's layout (<split>/<level>/<N>.txt) whose record names it as
    RACE does ("high10024.txt") or not at all; any other id is the source's and is kept."""
    real = Path(os.path.abspath(path))  # the names above the file; no need to follow links
    m = _NUMBERED.match(real.name)
    level, split = real.parent.name.lower(), real.parent.parent.name.lower()
    if not m or level not in ("high", "middle") or split not in ("train", "dev", "test"):
        return None
    if record_id is not None and str(record_id) != f"{level}{m.group(1)}.txt":
        return None
    return f"{split}/{level}/{m.group(1)}"


def read(path: str | os.PathLike, annotator: str | None = None) -> Dataset:
    """A RACE file or folder → Dataset (annotator is unused: RACE carries no annotations)."""
    ds = header(path)
    ds.passages = list(passages(path, ds))
    return ds


def header(path: str | os.PathLike) -> Dataset:
    """The Dataset of a file or folder without its passages (`passages` fills in its extras)."""
    p = Path(path)
    return Dataset(source="race", extra={"file": str(p), "format": "race", "layout": "folder" if p.is_dir() else None})


def passages(path: str | os.PathLike, ds: Dataset, annotator: str | None = None) -> Iterator[Passage]:
    """The passages of a RACE file or folder, one record at a time (a JSON-lines file is never
    held whole: `formats.read` can take them as the store does, for a file too large to hold);
    the file's layout and JSON style go into `ds.extra` as they are read."""
    p = Path(path)
    root = p.resolve() if p.is_dir() else None
    files = _folder_files(p) if p.is_dir() else [p]
    if not files:
        raise InputError(str(p), None, None, "no .txt, .json or .jsonl files in the folder")
    # duplicates are told by a digest of the record: holding the records would hold the file
    seen = safe_read.IdRegistry(str(p), "passage")
    for f in files:
        rel = f.relative_to(root) if root else f
        level, split = _level_split(rel)
        if f.suffix.lower() == ".jsonl":  # streamed: a large file is never held as text
            style: dict = {}
            records = ((rec, f"line {n}", None) for n, rec in safe_read.iter_jsonl(f, style))
            if root is None:
                ds.extra["layout"], ds.extra["json_style"] = "jsonl", style
        else:
            text = safe_read.read_text(f)  # read once: the layout and the records come from the same bytes
            if root is None:
                ds.extra["layout"] = _layout(f, text)
                ds.extra["json_style"] = safe_read.json_style(text)
            records = _records(f, text)
            del text
        for rec, label, name_id in records:
            passage = passage_from_record(rec, str(f), label, default_id=name_id)
            if name_id is not None:
                _readable(passage, readable_id(f, rec.get("id") if isinstance(rec, dict) else None))
            if root:
                passage.extra["file"] = rel.as_posix()
            passage.level, passage.split = level, split
            if seen.add(passage.id, rec, f"{f.name} {label}"):
                yield passage


def _readable(passage: Passage, pid: str | None) -> None:
    """Rename a passage and its questions to the readable id; the former id is kept for databases
    that stored it (the store goes on using the name it already has) and for the export."""
    if pid is None or pid == passage.id:
        return
    passage.extra["former_id"] = passage.id
    passage.extra["readable_id"] = pid
    passage.extra.setdefault("file", f"{pid}.txt")  # a folder export puts it where RACE has it
    passage.id = pid
    for q in passage.questions:
        q.id, q.passage_id = f"{pid}-{q.index}", pid


def _layout(p: Path, text: str) -> str:
    if p.suffix.lower() == ".jsonl" or _several_values(text):
        return "jsonl"
    return "list" if text.lstrip().startswith("[") else "object"


def _folder_files(folder: Path) -> list[Path]:
    return [f for f in walk(folder) if f.suffix.lower() in (".txt", ".json", ".jsonl")]


def write(datasets: Dataset | list[Dataset], path: str | os.PathLike) -> list[tuple[str, str]]:
    """Write passages as RACE: a folder → one .txt per passage, .jsonl → lines, else a JSON list.

    Returns, for a folder, the (passage id, file name) pairs whose name is not simply the id:
    an id that is no safe file name ("../x", "/", "a\\0b") is written under a safe unique name,
    listed in `ids.tsv` in the folder; nothing is ever written outside it."""
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    pairs = [(p, ds.extra.get("json_style")) for ds in datasets for p in ds.passages]
    style = next((st for _, st in pairs if st), None)
    out = Path(path)
    if out.suffix.lower() == ".jsonl":
        safe_read.write_text_atomic(out, "".join(safe_read.dumps_line(record_from_passage(p), style) + "\n" for p, _ in pairs))
        return []
    if out.suffix == "" or out.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        names = FileNames()
        renamed = []
        for p, st in pairs:
            stored = p.extra.get("file")
            name = names.claim(stored if isinstance(stored, str) else None, p.id)
            if name != stored and name != f"{p.id}.txt":
                renamed.append((p.id, name))
            text = safe_read.dumps_line(record_from_passage(p), st or style)
            safe_read.write_text_atomic(out / name, text + ("\n" if (st or {}).get("final_newline") else ""))
        if renamed:
            safe_read.write_text_atomic(out / "ids.tsv", "id\tfile\n" + "".join(
                f"{json_quote(i)}\t{n}\n" for i, n in renamed))
        return renamed
    records = [record_from_passage(p) for p, _ in pairs]
    if style:
        text = safe_read.dumps_line(records, style) + ("\n" if style.get("final_newline") else "")
    else:
        text = json.dumps(records, ensure_ascii=False)
    safe_read.write_text_atomic(out, text)
    return []


def json_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)[1:-1]


_UNSAFE = re.compile(r"[^A-Za-z0-9._\-]")


class FileNames:
    """Safe, unique relative file names for passages in an export folder.

    A name is kept when every part of it is plain (letters, digits, . _ -; not "." or "..")
    and it is not taken yet (compared case-insensitively: macOS and Windows folders are);
    otherwise it is made from the id with unsafe characters replaced, and numbered if taken."""

    def __init__(self):
        self.files: set[str] = set()
        self.dirs: set[str] = set()

    def _free(self, name: str) -> bool:
        low = name.lower()
        parts = low.split("/")
        if low in self.files or low in self.dirs:
            return False
        return not any("/".join(parts[:i]) in self.files for i in range(1, len(parts)))

    def _take(self, name: str) -> str:
        parts = name.lower().split("/")
        self.files.add(name.lower())
        self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        return name

    @staticmethod
    def _plain(name: str) -> bool:
        parts = name.split("/")
        return all(part and part not in (".", "..") and not part.startswith(".") and not _UNSAFE.search(part)
                   for part in parts) and len(name) < 200

    def claim(self, stored: str | None, ident: str) -> str:
        for candidate in (stored, f"{ident}.txt"):
            if candidate and self._plain(candidate) and self._free(candidate):
                return self._take(candidate)
        base = re.sub(r"\.{2,}", "_", _UNSAFE.sub("_", ident.replace("/", "_")))[:120].strip(".") or "passage"
        name, n = f"{base}.txt", 1
        while not self._free(name):
            n += 1
            name = f"{base}~{n}.txt"
        return self._take(name)
