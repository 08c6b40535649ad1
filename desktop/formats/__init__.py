"""Outside file formats ↔ domain objects.

`detect(path)` names the format of a file (or folder), `read(path, fmt)` turns it into
Datasets, `write(fmt, datasets, path)` writes RACE, EMBRACE or ExpMRC back.  Each
format has its own module with `read(path, annotator=None) -> Dataset`; race,
embrace and expmrc also have `write(datasets, path)`, the exact inverse of their
reader for data that came in through it.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterator

from desktop.domain.errors import InputError
from desktop.domain.model import Dataset

from . import _io

FORMATS = ("race", "embrace", "expmrc", "expmrc-pred", "dream", "quail", "cosmosqa")
WRITABLE = ("race", "embrace", "expmrc")
EXTENSIONS = (".json", ".jsonl", ".txt", ".xml", ".csv")
_SNIFF_BYTES = 64 * 1024


def _module(fmt: str):
    import importlib
    if fmt not in FORMATS or fmt == "expmrc-pred":
        raise ValueError(fmt)
    return importlib.import_module(f"desktop.formats.{fmt}")


def walk(folder: str | os.PathLike) -> list[Path]:
    """Data files under a folder, sorted; links that lead outside the folder are never followed."""
    root = Path(folder).resolve()
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            f = Path(dirpath) / name
            if name.startswith(".") or f.suffix.lower() not in EXTENSIONS:
                continue
            # folders are walked without following links, so only the file itself can be one
            if f.is_symlink() and root not in f.resolve().parents:
                continue
            if f.is_file():
                out.append(f)
    return out


def detect(path: str | os.PathLike) -> str:
    """race | embrace | expmrc | expmrc-pred | dream | quail | cosmosqa, by extension and content.

    A folder is named after its first data file (`read` detects each file on its own)."""
    p = Path(path)
    if p.is_dir():
        files = walk(p)
        if not files:
            raise InputError(str(p), None, None, f"no data files ({', '.join(EXTENSIONS)}) in the folder")
        return detect(files[0])
    suffix = p.suffix.lower()
    if suffix == ".xml":
        return "quail"
    if suffix == ".csv":
        return "cosmosqa"
    try:
        with open(p, "rb") as fh:
            head = fh.read(_SNIFF_BYTES).decode("utf-8-sig", errors="replace")
    except OSError as exc:
        raise InputError(str(p), None, None, f"cannot read the file ({exc.strerror or exc})") from None
    if not head.strip():
        raise InputError(str(p), None, None, "the file is empty")
    first = head.lstrip()
    if first.startswith("{") and (suffix == ".jsonl" or "\n" in first.strip()):
        # JSON lines (or one object per line under another extension): the first record decides
        kind = _detect_first_line(p)
        if kind:
            return kind
    # Keys are read from the JSON structure of the head, never from string values: a RACE
    # option that says "test" or "mcq" does not make the file EMBRACE.
    shape = _Shape.of(head)
    kind = shape.kind()
    if kind:
        return kind
    if "context" in first.split("\n", 1)[0] and "answer0" in first.split("\n", 1)[0]:
        return "cosmosqa"
    raise InputError(str(p), None, None,
                     "cannot tell the format from the content; name it (race, embrace, expmrc, dream, quail, cosmosqa)")


def _kind_of_record(keys) -> str | None:
    keys = set(keys)
    if {"test", "text"} <= keys:
        return "embrace"
    if "context_id" in keys or "correct_answer_id" in keys:
        return "quail"
    if "article" in keys:
        return "race"
    return None


def _detect_first_line(p: Path) -> str | None:
    with open(p, "rb") as fh:
        line = fh.readline(_io.MAX_BYTES)
    try:
        rec = json.loads(line.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return _kind_of_record(rec) if isinstance(rec, dict) else None


_COLON = re.compile(r"\s*(:?)")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


class _Shape:
    """The keys at the top of a JSON document, from its first bytes (which may end mid-way).

    top: "object" | "list"; keys: the top object's keys; first: the type of the top list's
    first element and that element's keys; data: the keys of the first object of "data"."""

    def __init__(self):
        self.top: str | None = None
        self.keys: list[str] = []
        self.first: str | None = None
        self.first_keys: list[str] = []
        self.data_keys: list[str] = []
        self.first_value: str | None = None  # the type of the top object's first value

    @classmethod
    def of(cls, head: str) -> "_Shape":
        shape = cls()
        stack: list[str] = []  # "{" or "[" per open container
        path: list = []  # per level: the current key (objects) or element index (lists)
        pending_key = None
        for m in _TOKEN.finditer(head):
            tok = m.group()
            if tok == ":":
                continue
            if tok in "{[":
                shape._enter(stack, path, tok)
                stack.append(tok)
                path.append(None if tok == "{" else 0)
                pending_key = None
                continue
            if tok in "}]":
                if not stack:
                    break
                stack.pop()
                path.pop()
                if not stack:
                    break
                continue
            if tok == ",":
                if stack and stack[-1] == "[":
                    path[-1] += 1
                    if len(stack) == 1:  # past the top list's first element: all that decides
                        break
                pending_key = None
                continue
            if stack and stack[-1] == "{" and pending_key is None and tok.startswith('"'):
                colon = _COLON.match(head, m.end())
                if colon.group(1) or colon.end() == len(head):
                    try:
                        key = json.loads(tok)
                    except ValueError:
                        key = tok.strip('"')
                    pending_key = key
                    path[-1] = key
                    shape._key(stack, path, key)
                    if len(stack) == 1 and _kind_of_record(shape.keys):
                        break  # a record's own keys decide (a RACE file: "article")
                    continue
            if not stack:
                shape.top = shape.top or "scalar"
            elif len(stack) == 1 and stack[0] == "{" and shape.first_value is None:
                shape.first_value = "scalar"
            elif len(stack) == 1 and stack[0] == "[" and path[0] == 0 and shape.first is None:
                shape.first = "scalar"
        return shape

    def _enter(self, stack, path, tok):
        kind = "object" if tok == "{" else "list"
        if not stack:
            self.top = self.top or kind
        elif len(stack) == 1 and stack[0] == "[" and path[0] == 0:
            self.first = self.first or kind
        elif len(stack) == 1 and stack[0] == "{" and self.first_value is None:
            self.first_value = kind

    def _key(self, stack, path, key):
        if len(stack) == 1:
            self.keys.append(key)
        elif len(stack) == 2 and stack[0] == "[" and path[0] == 0:
            self.first_keys.append(key)
        elif len(stack) == 3 and path[0] == "data" and stack[1] == "[" and path[1] == 0:
            self.data_keys.append(key)

    def kind(self) -> str | None:
        if self.top == "object":
            by_keys = _kind_of_record(self.keys)  # an ExpMRC document has no "article" of its own
            if by_keys:
                return by_keys
            if "data" in self.keys:
                return "expmrc"
            if self.keys and self.first_value == "object" and all(re.search(r"-[0-9]+$", k) for k in self.keys):
                return "expmrc-pred"
            return None
        if self.top == "list":
            if self.first == "list":
                return "dream"
            if self.first == "object":
                return _kind_of_record(self.first_keys)
        return None


# Readers that give their passages one record at a time (`module.header` + `module.passages`)
STREAMED = ("race", "embrace")


class Budget:
    """How many questions one reading may still hold in memory (shared by the files it reads)."""

    def __init__(self, questions: int):
        self.left = questions


def read(path: str | os.PathLike, fmt: str = "auto", annotator: str | None = None,
         progress=None, keep: Budget | None = None) -> list[Dataset]:
    """A file or folder → Datasets (one per file; a folder of RACE files is one Dataset).

    An ExpMRC prediction file gives a Dataset with source "expmrc-pred", no passages
    and `extra["predictions"]` = {question id: Prediction}.

    `progress(done, total, records)`, if given, is called as the reading goes: `done`
    files of `total` read (fractional inside a JSON-lines file), `records` JSON-lines
    records read so far.  An exception it raises (a cancel) stops the reading.

    `keep`: every record is still read and checked, but a file of a streamed format whose
    questions do not fit the budget is not held: its Dataset's `passages` is a `Reread`,
    which reads the file again, one record at a time, each time it is iterated (what
    `mcqlens import` does with a file of millions of questions)."""
    if progress is not None:
        reading = _Reading(path, progress)
        token = _io.READING.set(reading)
        try:
            out = read(path, fmt, annotator, keep=keep)
        finally:
            _io.READING.reset(token)
        reading.finish()
        return out
    p = Path(path)
    if fmt != "auto" and fmt not in FORMATS:
        raise InputError(str(p), None, None, f"unknown format {fmt!r}; one of: {', '.join(FORMATS)}")
    if not p.exists():
        raise InputError(str(p), None, None, "no such file or folder")
    if p.is_dir():
        root = p.resolve()
        files = walk(p)
        if not files:
            raise InputError(str(p), None, None, f"no data files ({', '.join(EXTENSIONS)}) in the folder")
        out = []
        for f in files:
            # each file is its own dataset, recorded under its own path (as given: relative stays
            # relative), so `export --file` finds it again and re-importing skips it by its bytes
            rel = f.relative_to(root)
            shown = p / rel
            kind = fmt if fmt != "auto" else detect(f)
            # a RACE folder export writes each passage back to its own file
            in_folder = _InFolder(rel.as_posix()) if kind == "race" else None
            for ds in _read_file(f, kind, annotator, shown=shown, keep=keep, each=in_folder):
                ds.extra["folder"] = str(p)
                ds.extra["path_in_folder"] = rel.as_posix()
                out.append(ds)
        return out
    return _read_file(p, detect(p) if fmt == "auto" else fmt, annotator, keep=keep)


class _InFolder:
    """What reading a file of a folder adds to each of its passages (picklable, unlike a lambda)."""

    def __init__(self, rel: str):
        self.rel = rel

    def __call__(self, passage) -> None:
        passage.extra.setdefault("file", self.rel)


class Reread:
    """The passages of a file too large to hold: iterating reads the file again, one record at a
    time, and the bytes must be those read the first time (else an InputError: the file changed).
    `questions` and `passages` are the counts of the first reading."""

    def __init__(self, path: Path, fmt: str, annotator: str | None, sha: str | None, each, questions: int,
                 passages: int):
        self.path, self.fmt, self.annotator, self.sha, self.each = path, fmt, annotator, sha, each
        self.questions, self.passages = questions, passages

    def __iter__(self):
        module = _module(self.fmt)
        inner = module.passages(self.path, module.header(self.path), self.annotator)
        digests = {str(self.path): self.sha} if self.sha else {}
        while True:
            # set and reset around each step, in this frame: a generator may be left half-read
            token = _io.DIGESTS.set(digests)
            try:
                passage = next(inner)
            except StopIteration:
                return
            finally:
                _io.DIGESTS.reset(token)
            if self.each is not None:
                self.each(passage)
            yield passage


def count_questions(ds: Dataset) -> int:
    """How many questions a dataset holds, without reading a `Reread` file again."""
    if isinstance(ds.passages, list):
        return sum(len(p.questions) for p in ds.passages)
    return ds.passages.questions  # a Reread (or the door's wrapper of one): counted when first read


class _Reading:
    """Counts files and JSON-lines records for `read(progress=...)`."""

    def __init__(self, path, progress):
        p = Path(path)
        self.total = max(1, len(walk(p))) if p.is_dir() else 1
        self.progress = progress
        self.seen: set[Path] = set()
        self.records = 0

    def file(self, p: Path) -> None:
        if p not in self.seen:  # some readers read a file twice (layout sniffing)
            self.seen.add(p)
            self.progress(min(len(self.seen) - 1, self.total), self.total, self.records)

    def record(self, n: int, total: int) -> None:
        self.records += 1
        done = min(max(len(self.seen) - 1, 0) + n / max(total, 1), self.total)
        self.progress(done, self.total, self.records)

    def finish(self) -> None:
        self.progress(self.total, self.total, self.records)


def _read_file(p: Path, fmt: str, annotator: str | None, shown: Path | None = None,
               keep: Budget | None = None, each=None) -> list[Dataset]:
    token = _io.DIGESTS.set({})
    try:
        if fmt == "expmrc-pred":
            from .expmrc import read_predictions
            preds = read_predictions(p)
            datasets = [Dataset(source="expmrc-pred", extra={"file": str(p), "format": fmt, "model_id": p.stem,
                                                            "predictions": preds})]
        elif keep is not None and fmt in STREAMED:
            datasets = [_read_within(p, fmt, annotator, keep, each)]
        else:
            datasets = [_module(fmt).read(p, annotator)]
            if each is not None:
                for passage in datasets[0].passages:
                    each(passage)
        sha = _io.DIGESTS.get().get(str(p))
    finally:
        _io.DIGESTS.reset(token)
    for ds in datasets:
        if isinstance(ds.passages, Reread):
            ds.passages.sha = sha
    for ds in datasets:
        if shown is not None:
            ds.extra["file"] = str(shown)
        if sha is not None:
            ds.extra["sha256"] = sha  # of the bytes that were read, for "already imported"
    return datasets


def _read_within(p: Path, fmt: str, annotator: str | None, keep: Budget, each) -> Dataset:
    """Read and check every record of a file; hold its passages only while `keep` lasts."""
    module = _module(fmt)
    ds = module.header(p)
    kept: list | None = []
    n_questions = n_passages = 0
    for passage in module.passages(p, ds, annotator):
        if each is not None:
            each(passage)
        n_passages += 1
        n_questions += len(passage.questions)
        if kept is not None:
            kept.append(passage)
            keep.left -= len(passage.questions)
            if keep.left < 0:  # too large to hold: give its share back, read it again when stored
                keep.left += sum(len(x.questions) for x in kept)
                kept = None
    ds.passages = kept if kept is not None else Reread(p, fmt, annotator, None, each, n_questions, n_passages)
    return ds


def write(fmt: str, datasets: Dataset | list[Dataset], path: str | os.PathLike, **options):
    """Write datasets as race (folder, .json list or .jsonl), embrace (.jsonl) or expmrc (.json)."""
    if fmt not in WRITABLE:
        raise InputError(str(path), None, None, f"cannot write {fmt!r}; writable: {', '.join(WRITABLE)}")
    return _module(fmt).write(datasets, path, **options)


def iter_questions(datasets: list[Dataset]) -> Iterator:
    for ds in datasets:
        yield from ds.questions()


__all__ = ["FORMATS", "WRITABLE", "STREAMED", "Budget", "Reread", "count_questions", "detect", "read", "write",
           "walk", "_io"]
