"""Outside file formats ↔ domain objects.

`detect(path)` names the format of a file (or folder), `read(path, fmt)` turns it into
Datasets, `write(fmt, datasets, path)` writes RACE, EMBRACE or ExpMRC back.  Each
format has its own module with `read(path, annotator=None) -> Dataset`; race,
embrace and expmrc also have `write(datasets, path)`, the exact inverse of their
reader for data that came in through it.  Where the work is: `folders` (a folder's data
files), `detection` (which format), `reading` (read, write, the budget of a large import).
"""
from __future__ import annotations

from . import safe_read  # noqa: F401  (the shared reading rules, as `formats.safe_read`)
from .detection import detect
from .folders import EXTENSIONS, walk
from .reading import FORMATS, STREAMED, WRITABLE, Budget, Reread, count_questions, iter_questions, read, write

__all__ = ["FORMATS", "WRITABLE", "STREAMED", "EXTENSIONS", "Budget", "Reread", "count_questions", "detect", "read",
           "write", "walk", "iter_questions"]
