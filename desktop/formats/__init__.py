"""Outside file formats ↔ domain objects.

`detect(path)` names the format of a file (or folder), `read(path, fmt)` turns it into
Datasets, `write(fmt, datasets, path)` writes RACE, EMBRACE or ExpMRC back.  Each
format has its own module with `read(path, annotator=None) -> Dataset`; race,
embrace and expmrc also have `write(datasets, path)`, the exact inverse of their
reader for data that came in through it.
"""
from __future__ import annotations

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
_PRED = re.compile(r'^\{\s*"[^"]*-\d+"\s*:\s*\{')


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
            real = f.resolve()
            if real != f and root not in real.parents:
                continue
            if real.is_file():
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
    if suffix == ".jsonl" and "\n" not in first.rstrip("\n"):
        # one record longer than the sniffed head: decide on the first line's keys
        kind = _detect_first_line(p)
        if kind:
            return kind
    if '"mcq"' in head and '"test"' in head:
        return "embrace"
    # ExpMRC wraps passages in {"version", "data": [...]}; "evidences" may lie beyond the sniffed head
    if first.startswith("{") and ('"evidences"' in head or re.search(r'"data"\s*:\s*\[', head)):
        return "expmrc"
    if '"context_id"' in head or '"correct_answer_id"' in head:
        return "quail"
    if '"article"' in head:
        return "race"
    if _PRED.match(first):
        return "expmrc-pred"
    if re.match(r"\[\s*\[", first):
        return "dream"
    if "context" in first.split("\n", 1)[0] and "answer0" in first.split("\n", 1)[0]:
        return "cosmosqa"
    raise InputError(str(p), None, None,
                     "cannot tell the format from the content; name it (race, embrace, expmrc, dream, quail, cosmosqa)")


def _detect_first_line(p: Path) -> str | None:
    import json
    with open(p, "rb") as fh:
        line = fh.readline(_io.MAX_BYTES)
    try:
        rec = json.loads(line.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(rec, dict):
        return None
    if "test" in rec and "text" in rec:
        return "embrace"
    if "context_id" in rec or "correct_answer_id" in rec:
        return "quail"
    if "article" in rec:
        return "race"
    return None


def read(path: str | os.PathLike, fmt: str = "auto", annotator: str | None = None,
         progress=None) -> list[Dataset]:
    """A file or folder → Datasets (one per file; a folder of RACE files is one Dataset).

    An ExpMRC prediction file gives a Dataset with source "expmrc-pred", no passages
    and `extra["predictions"]` = {question id: Prediction}.

    `progress(done, total, records)`, if given, is called as the reading goes: `done`
    files of `total` read (fractional inside a JSON-lines file), `records` JSON-lines
    records read so far.  An exception it raises (a cancel) stops the reading."""
    if progress is not None:
        reading = _Reading(path, progress)
        token = _io.READING.set(reading)
        try:
            out = read(path, fmt, annotator)
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
        files = walk(p)
        if not files:
            raise InputError(str(p), None, None, f"no data files ({', '.join(EXTENSIONS)}) in the folder")
        kinds = {f: (fmt if fmt != "auto" else detect(f)) for f in files}
        if set(kinds.values()) == {"race"}:
            from . import race
            return [race.read(p, annotator)]
        return [ds for f in files for ds in _read_file(f, kinds[f], annotator)]
    return _read_file(p, detect(p) if fmt == "auto" else fmt, annotator)


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


def _read_file(p: Path, fmt: str, annotator: str | None) -> list[Dataset]:
    if fmt == "expmrc-pred":
        from .expmrc import read_predictions
        preds = read_predictions(p)
        return [Dataset(source="expmrc-pred", extra={"file": str(p), "format": fmt, "model_id": p.stem,
                                                     "predictions": preds})]
    return [_module(fmt).read(p, annotator)]


def write(fmt: str, datasets: Dataset | list[Dataset], path: str | os.PathLike, **options) -> None:
    """Write datasets as race (folder, .json list or .jsonl), embrace (.jsonl) or expmrc (.json)."""
    if fmt not in WRITABLE:
        raise InputError(str(path), None, None, f"cannot write {fmt!r}; writable: {', '.join(WRITABLE)}")
    _module(fmt).write(datasets, path, **options)


def iter_questions(datasets: list[Dataset]) -> Iterator:
    for ds in datasets:
        yield from ds.questions()


__all__ = ["FORMATS", "WRITABLE", "detect", "read", "write", "walk", "_io"]
