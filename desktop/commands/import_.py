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


def run(args) -> int:
    from desktop.domain.model import DEFAULT_ANNOTATOR
    from desktop.formats import door
    from desktop.store import Store

    annotator = args.annotator or DEFAULT_ANNOTATOR
    total = sum(_size(p) for p in args.paths)
    bar = None
    if total >= _PROGRESS_BYTES or len(args.paths) > 3:
        from tqdm import tqdm
        # disable=None: no bar when stderr is not a terminal, so scripts see only the `error:` line
        bar = tqdm(total=len(args.paths), unit="file", desc="reading", file=sys.stderr, leave=False, disable=None)
    read = []
    for path in args.paths:
        read.append((path, door.read(path, args.format, verb="imported")))
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
