"""Reading a file or folder into Datasets, and writing them back: the formats' one entry
(`read`, `write`), with progress, the memory budget of a large import and its second reading."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from desktop.domain.errors import InputError
from desktop.domain.model import Dataset

from . import cosmosqa, dream, embrace, expmrc, quail, race, safe_read
from .detection import detect
from .folders import EXTENSIONS, walk

FORMATS = ("race", "embrace", "expmrc", "expmrc-pred", "dream", "quail", "cosmosqa")
WRITABLE = ("race", "embrace", "expmrc")
# the module of each format that has one (an ExpMRC prediction file is read by `expmrc`)
MODULES = {"race": race, "embrace": embrace, "expmrc": expmrc, "dream": dream, "quail": quail, "cosmosqa": cosmosqa}


def module_of(fmt: str):
    if fmt not in MODULES:
        raise ValueError(fmt)
    return MODULES[fmt]


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
        token = safe_read.READING.set(reading)
        try:
            out = read(path, fmt, annotator, keep=keep)
        finally:
            safe_read.READING.reset(token)
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
        module = module_of(self.fmt)
        inner = module.passages(self.path, module.header(self.path), self.annotator)
        digests = {str(self.path): self.sha} if self.sha else {}
        while True:
            # set and reset around each step, in this frame: a generator may be left half-read
            token = safe_read.DIGESTS.set(digests)
            try:
                passage = next(inner)
            except StopIteration:
                return
            finally:
                safe_read.DIGESTS.reset(token)
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
    token = safe_read.DIGESTS.set({})
    try:
        if fmt == "expmrc-pred":
            preds = expmrc.read_predictions(p)
            datasets = [Dataset(source="expmrc-pred", extra={"file": str(p), "format": fmt, "model_id": p.stem,
                                                            "predictions": preds})]
        elif keep is not None and fmt in STREAMED:
            datasets = [_read_within(p, fmt, annotator, keep, each)]
        else:
            datasets = [module_of(fmt).read(p, annotator)]
            if each is not None:
                for passage in datasets[0].passages:
                    each(passage)
        sha = safe_read.DIGESTS.get().get(str(p))
    finally:
        safe_read.DIGESTS.reset(token)
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
    module = module_of(fmt)
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
    return module_of(fmt).write(datasets, path, **options)


def iter_questions(datasets: list[Dataset]) -> Iterator:
    for ds in datasets:
        yield from ds.questions()
