"""A store's own files: the database and its -wal, -shm and -journal, known by device and
inode through `os.stat`, which opens nothing.

Only SQLite may open them while this process holds a connection: closing any other
descriptor of the file drops every POSIX lock the process holds on it, SQLite's included
(see `opening.probe`).  So a file the user picks to import or merge, or a folder
fingerprinted for "already imported", is first compared with them here, without reading it.
"""
from __future__ import annotations

import os
from pathlib import Path

from desktop.domain.errors import InputError
from desktop.formats import walk

SIDE_FILES = ("", "-wal", "-shm", "-journal")


def inode(path: str | os.PathLike) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def inodes(database: str | os.PathLike | None) -> set[tuple[int, int]]:
    """Device and inode of the database and of each side file that exists now."""
    if not database or str(database) == ":memory:":
        return set()
    return {i for i in (inode(f"{database}{s}") for s in SIDE_FILES) if i is not None}


def among(path: str | os.PathLike, database: str | os.PathLike | None) -> Path | None:
    """The first of the store's own files that reading `path` would open (`path` itself, or
    a data file of the folder `path`), or None."""
    own = inodes(database)
    if not own:
        return None
    p = Path(path)
    if p.is_dir():
        return next((f for f in walk(p) if inode(f) in own), None)
    return p if inode(p) in own else None


def refuse(path: str | os.PathLike, database: str | os.PathLike | None, verb: str = "imported") -> None:
    """One InputError line when reading `path` would open the store's own files."""
    found = among(path, database)
    if found is not None:
        where = "" if Path(found) == Path(path) else f" (it holds {found.name})"
        raise InputError(str(path), None, None, f"is the database {Path(str(database)).name} itself or one of its "
                         f"side files{where}; it cannot be {verb} into itself")
