"""The one way the product writes a file: beside the target, flushed to disk, renamed into place.

A crash, a full disk or a cancel while writing leaves the old file (or none), never half of
one: the new bytes go to a hidden temporary name in the target's folder (same filesystem, so
the rename is atomic), are fsynced, and only then replace the target.  A folder (a RACE export
of .txt files) is built the same way and swapped whole.  Every writer of the product goes
through `replacing` or `write_text`: the exports, the prediction table, the give-away CSV,
`expmrc predict`, the merge's conflict list, the agreement files.
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def temporary_name(out: Path) -> Path:
    """A hidden name beside `out`, with `out`'s suffix (writers choose their layout by it);
    a target without a suffix (a RACE folder) gets none."""
    if out.suffix:
        return out.with_name(f".{out.name}.tmp-{os.getpid()}{out.suffix}")
    return out.with_name(f".{out.name}_tmp{os.getpid()}")


@contextmanager
def replacing(out: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `out`; write it (a file or a folder) inside the block.
    On success it is fsynced and renamed over `out`; on any failure it is removed and `out`
    is left as it was."""
    out = Path(out)
    tmp = temporary_name(out)
    try:
        yield tmp
        _sync(tmp)
        _swap(tmp, out)
    except BaseException:
        remove(tmp)
        raise
    _sync_folder(out.parent)


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8", newline: str | None = None) -> None:
    """Write `text` to `path` atomically (its folder is created when missing)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with replacing(p) as tmp:
        tmp.write_text(text, encoding=encoding, newline=newline)


def remove(tmp: Path) -> None:
    """Take a temporary file or folder away (and the `.part` a nested writer may have left)."""
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.unlink(missing_ok=True)
    tmp.with_name(tmp.name + ".part").unlink(missing_ok=True)


def _swap(tmp: Path, out: Path) -> None:
    if tmp.is_dir() and out.exists():  # a folder export: swap whole folders
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


def _sync(path: Path) -> None:
    # the bytes are on disk before the name points at them (else a power cut can leave an empty file)
    files = [path] if not path.is_dir() else [p for p in path.rglob("*") if p.is_file()]
    for p in files:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _sync_folder(folder: Path) -> None:
    # the rename itself is durable once the folder's entry is; not every filesystem allows it
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
