"""Output files of the commands: may this path be written, and writing it whole or not at all.

One rule for every command that writes a file the user names (`-o OUT`): a path that
does not exist is written; an existing *regular file* is replaced only with `--force`;
anything else — a folder, a device node, a FIFO, a socket, a symbolic link — is never
replaced, with or without `--force` (`--force /dev/sda` must not be a disaster).
Files are written beside the target and renamed over it, so a failed or killed run
leaves the old file (or nothing), never half a file.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from desktop.domain.errors import McqLensError


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def check_output(path: str | os.PathLike, force: bool) -> Path:
    """`path` as a Path when the command may write it; else McqLensError saying why not."""
    out = Path(path)
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}") from None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise McqLensError(f"{out} is {_kind(st.st_mode)}; it is never replaced (choose another output path)")
        if not force:
            raise McqLensError(f"{out} exists; add --force to replace it")
    parent = out.parent
    if not parent.is_dir():
        raise McqLensError(f"cannot write {out}: folder {parent} does not exist")
    return out


def write_atomically(path: str | os.PathLike, write: Callable[[Path], None]) -> None:
    """`write(tmp)` into a hidden file beside `path`, then rename it over `path`.

    An OSError (disk full, read-only folder) becomes one McqLensError line; the
    temporary file is removed whatever happens.
    """
    out = Path(path)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, out)
    except OSError as exc:
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    finally:
        tmp.unlink(missing_ok=True)
