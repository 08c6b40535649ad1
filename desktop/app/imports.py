"""Importing files into a database (`mcqlens import`, File → Import…).

Every path is read and checked before anything is written; then all of them go into the
database in one transaction, so a bad file leaves the database as it was.

Memory stays bounded whatever the size of the files: while reading, the passages are kept
only up to `KEEP_QUESTIONS` questions in all; a JSON-lines file beyond that (RACE, EMBRACE)
is read to the end and checked, not kept, and read again, one part at a time, as the store
writes it (`formats.Reread`: the second reading must find the same bytes).
"""
from __future__ import annotations

import os
from typing import Callable

from desktop import formats
from desktop.domain.model import DEFAULT_ANNOTATOR, Dataset
from desktop.domain.words import count
from desktop.formats import door
from desktop.store import Store, own_files
from desktop.store.importing import collector_paused

# Questions held while reading (about 1 KB each in memory); a larger file is read again when stored
KEEP_QUESTIONS = 150_000


def read_paths(paths: list[str], db: str, fmt: str = "auto",
               progress_of: Callable[[int, str], Callable | None] | None = None) -> list[tuple[str, list[Dataset]]]:
    """(path, datasets) of every path, all read and checked before anything is stored.
    `progress_of(i, name)` gives the reader's progress callable for the i-th path."""
    for path in paths:  # the database or its -wal, picked by mistake: one line, nothing read
        own_files.refuse(path, db)
    keep = formats.Budget(KEEP_QUESTIONS)  # read at call time (a test sets the module's KEEP_QUESTIONS)
    read = []
    with collector_paused():  # as while storing (desktop/store/importing.py)
        for i, path in enumerate(paths):
            name = os.path.basename(os.path.normpath(path)) or path
            progress = progress_of(i, name) if progress_of is not None else None
            read.append((path, door.read(path, fmt, verb="imported", keep=keep, progress=progress)))
    return read


def questions_in(read: list[tuple[str, list[Dataset]]]) -> int:
    return sum(formats.count_questions(ds) for _, datasets in read for ds in datasets)


def store_read(db: str, read: list[tuple[str, list[Dataset]]], annotator: str | None = None,
               progress: Callable[[int], None] | None = None) -> list:
    """Store what `read_paths` read into the database at `db` (created when missing), in ONE
    transaction; the ImportResult of each (file, dataset)."""
    annotator = annotator or DEFAULT_ANNOTATOR
    store = Store.open(db, annotator=annotator)
    try:
        return store.import_files(read, annotator=annotator, progress=progress)
    finally:
        store.close()


def read_file(path: str, progress: Callable[..., None] | None = None) -> list[Dataset]:
    """Read a RACE, EMBRACE or ExpMRC (or other supported) file into domain objects (the
    window's File → Import…, in a worker thread).

    `progress` is called with a text, and with (files done, files, records read) as
    the reader goes; an exception it raises (a cancel) stops the reading."""
    if progress:
        progress(f"Reading {path} ({door.detect(path)})…")
    datasets = door.read(path, progress=progress, verb="imported")  # the door every command reads through
    if progress:
        n = sum(1 for d in datasets for _ in d.questions())
        progress(f"Read {count(n, 'question')}; storing…")
    return datasets
