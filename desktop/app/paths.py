"""The checks every task makes on the paths it is given, before doing any work.

What a command reads is checked at the one door (`desktop.formats.door.input_file`);
here is what it writes: `output_file` / `output_folder`, checked BEFORE the work (a merge
is committed, a report computed, only after), so a bad output path costs nothing.
`--force` replaces only a regular file (or, for a RACE folder export, a folder holding
nothing but .txt files): never a device node, a pipe, a link or someone's folder.
"""
from __future__ import annotations

import stat
from pathlib import Path

from desktop.domain.errors import McqLensError
from desktop.store import own_files


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file"


def output_file(path: str | Path, force: bool | None = None) -> Path:
    """`path` can be written: its folder exists; if it exists it is a regular file and
    `force` is true (`force=None`: a command without --force that overwrites regular files)."""
    p = Path(path)
    if not p.parent.is_dir():
        raise McqLensError(f"cannot write {p}: folder {p.parent} does not exist")
    try:
        mode = p.lstat().st_mode
    except FileNotFoundError:
        return p
    if not stat.S_ISREG(mode):
        raise McqLensError(f"cannot write {p}: it exists and is {_kind(mode)}, not a regular file; not replaced")
    if force is False:
        raise McqLensError(f"{p} exists; add --force to overwrite it")
    return p


def output_folder(path: str | Path, force: bool | None = None, export_suffix: str | None = None) -> Path:
    """A folder to write into (created later by the command, parents included): it does not
    exist or is a folder.  With `export_suffix` (a folder export replaced whole) an existing
    folder needs `force` and may hold only regular files of that suffix (a previous export)."""
    p = Path(path)
    try:
        mode = p.lstat().st_mode
    except FileNotFoundError:
        return p
    if not stat.S_ISDIR(mode):
        raise McqLensError(f"cannot write into {p}: it exists and is {_kind(mode)}, not a folder")
    if export_suffix is None:
        return p
    if force is False:
        raise McqLensError(f"{p} exists; add --force to overwrite it")
    for entry in p.rglob("*"):
        m = entry.lstat().st_mode
        if not (stat.S_ISDIR(m) or (stat.S_ISREG(m) and entry.suffix == export_suffix)):
            raise McqLensError(f"cannot replace the folder {p}: {entry} is not an exported {export_suffix} file "
                               "(only a previous export is replaced with --force)")
    return p


def not_the_database(store, out: Path) -> None:
    """An export never replaces the database it reads, nor its -wal/-shm (even with --force)."""
    if own_files.among(out, store.path) is not None and not out.is_dir():
        raise McqLensError(f"cannot write {out}: it is the database being exported (or one of its side files); "
                           "choose another file")
