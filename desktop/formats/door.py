"""The one door for a user's file: every command and the window read what a user names here.

`input_file` checks the path (a regular file or a folder, never a device, pipe or socket
that could be read forever); `read` gives the datasets of a file or folder
(`formats.read`); `read_json` a JSON document that is not a dataset (what `mcqlens expmrc
evaluate` scores).  Whatever a hostile file makes a reader do ends as one `InputError`
naming the file (and, where the reader knows them, the record and the field), so every
command answers it with the same `error:` line and exit status 2: `import`, `merge`,
`nota`, `expmrc`, `train` and the window's File → Import alike.

The readers name the record and field themselves; the net here is for what they did not
foresee (`python -m fuzz.importers` calls the readers without it, to find those).
"""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from desktop import formats
from desktop.domain.errors import InputError, McqLensError
from desktop.domain.model import Dataset

from . import safe_read


def input_file(path: str | os.PathLike, folders: bool = False, what: str = "file", verb: str = "read") -> Path:
    """`path` exists and is a regular file (or a folder, if `folders`); else one InputError line
    (a pipe would block the command forever, a device such as /dev/zero never end)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode  # follows links: a link to a regular file is read as that file
    except FileNotFoundError:
        raise InputError(str(p), None, None, f"no such {what}" + (" or folder" if folders else "")) from None
    except OSError as exc:
        raise InputError(str(p), None, None, f"cannot read ({exc.strerror or exc})") from None
    if stat.S_ISREG(mode) or (folders and stat.S_ISDIR(mode)):
        return p
    raise InputError(str(p), None, None, f"not a regular file (a device, pipe or socket cannot be {verb})")


@contextmanager
def net(path: str | os.PathLike) -> Iterator[None]:
    """Failures a reader did not name become the one-line InputError about `path`."""
    try:
        yield
    except McqLensError:
        raise
    except RecursionError:
        raise InputError(str(path), None, None, "nested too deeply to be a dataset") from None
    except MemoryError:
        raise InputError(str(path), None, None, "too large to read into memory") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, None, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(str(path), None, None, f"cannot read ({exc.strerror or exc})") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        # a reader bug met by a hostile file still ends on the one-line error, not a traceback
        raise InputError(str(path), None, None, f"unexpected content ({type(exc).__name__}: {exc}); nothing was "
                         "read (please report this file: the reader should have named the field)") from None


def read(path: str | os.PathLike, fmt: str = "auto", annotator: str | None = None,
         progress=None, verb: str = "read", keep=None) -> list[Dataset]:
    """`formats.read` behind the door: the path checked first, every failure one InputError.
    `keep` (a `formats.Budget`): see `formats.read`; a `Reread` is read again behind the door too."""
    input_file(path, folders=True, verb=verb)
    with net(path):
        datasets = formats.read(path, fmt, annotator, progress=progress, keep=keep)
    for ds in datasets:
        if isinstance(ds.passages, formats.Reread):
            ds.passages = _Guarded(ds.passages, path)
    return datasets


class _Guarded:
    """A `Reread` whose second reading fails as the first would have: one InputError."""

    def __init__(self, reread, path):
        self.reread, self.path = reread, path
        self.questions, self.passages = reread.questions, reread.passages

    def __iter__(self):
        it = iter(self.reread)
        while True:
            with net(self.path):
                try:
                    passage = next(it)
                except StopIteration:
                    return
            yield passage


def detect(path: str | os.PathLike) -> str:
    """`formats.detect` behind the door (the window names the format before reading)."""
    input_file(path, folders=True)
    with net(path):
        return formats.detect(path)


def read_json(path: str | os.PathLike, what: str = "file") -> Any:
    """A JSON document a user names, read as the readers read theirs: size cap, UTF-8, strict
    JSON (no duplicate keys, NaN or lone surrogates); one InputError for anything else."""
    input_file(path, what=what)
    with net(path):
        return safe_read.load_json(path)
