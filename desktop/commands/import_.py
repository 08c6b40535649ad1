"""`mcqlens import PATH... [--db annotations.db] [--format auto|race|...] [--annotator NAME]`.

Every path is read and checked before anything is written; then all of them go into
the database in one transaction, so a bad file leaves the database as it was.
"""
from __future__ import annotations

import os
import sys

FORMAT_CHOICES = ("auto", "race", "embrace", "expmrc", "expmrc-pred", "dream", "quail", "cosmosqa")
_PROGRESS_BYTES = 20 * 1024 * 1024  # show a progress bar from this much input on


def register(sub) -> None:
    p = sub.add_parser("import", help="import RACE, EMBRACE, ExpMRC, DREAM, QuAIL or CosmosQA files or folders",
                       description="Import files or folders into the annotation database. Re-importing a file "
                                   "adds nothing; a bad file is reported and nothing is imported.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to import")
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db, created)")
    p.add_argument("--format", default="auto", choices=FORMAT_CHOICES,
                   help="format of the files (default: detected from name and content)")
    p.add_argument("--annotator", default=None,
                   help="attribute the file's annotations to NAME (default: 'imported')")
    p.set_defaults(func=run)


def _size(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _read(formats, path: str, fmt: str):
    """formats.read, with the failures of hostile files turned into the one-line error."""
    from desktop.domain.errors import InputError, McqLensError

    if os.path.exists(path):
        # a device or pipe has no size to check against the cap and may never end (/dev/zero)
        from desktop.commands.paths import input_file
        input_file(path, folders=True, verb="imported")
    try:
        return formats.read(path, fmt)
    except McqLensError:
        raise
    except RecursionError:
        raise InputError(path, None, None, "nested too deeply to be a dataset") from None
    except MemoryError:
        raise InputError(path, None, None, "too large to read into memory") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, None, None, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(path, None, None, f"cannot read ({exc.strerror or exc})") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        # a reader bug met by a hostile file still ends on the one-line error, not a traceback;
        # `python -m fuzz.importers` hunts these in the readers themselves
        raise InputError(path, None, None, f"unexpected content ({type(exc).__name__}: {exc}); nothing was "
                         "imported (please report this file: the reader should have named the field)") from None


def run(args) -> int:
    from desktop import formats
    from desktop.domain.model import DEFAULT_ANNOTATOR
    from desktop.store import Store

    annotator = args.annotator or DEFAULT_ANNOTATOR
    total = sum(_size(p) for p in args.paths)
    bar = None
    if total >= _PROGRESS_BYTES or len(args.paths) > 3:
        from tqdm import tqdm
        # disable=None: no bar when stderr is not a terminal, so scripts see only the `error:` line
        bar = tqdm(total=len(args.paths), unit="file", desc="reading", file=sys.stderr, leave=False, disable=None)
    from desktop.store import own_files

    for path in args.paths:  # the database or its -wal, picked by mistake: one line, nothing read
        own_files.refuse(path, args.db)
    read = []
    for path in args.paths:
        read.append((path, _read(formats, path, args.format)))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    store = Store.open(args.db, annotator=annotator)
    try:
        results = store.import_files(read, annotator=annotator)
    finally:
        store.close()
    for r in results:
        print(r.summary())
    added = sum(r.questions for r in results)
    print(f"{args.db}: {added} new questions")
    return 0
