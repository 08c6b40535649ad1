"""`mcqlens import PATH... [--db annotations.db] [--format auto|race|...] [--annotator NAME]`.

Every path is read and checked before anything is written; then all of them go into
the database in one transaction, so a bad file leaves the database as it was.

Memory stays bounded whatever the size of the files: while reading, the passages are kept
only up to `KEEP_QUESTIONS` questions in all; a JSON-lines file beyond that (RACE, EMBRACE)
is read to the end and checked, not kept, and read again, one part at a time, as the store
writes it (`formats.Reread`: the second reading must find the same bytes).  Both phases
say how far they are on stderr (`desktop.commands.progress`): a bar on a terminal, a line
every few seconds otherwise.
"""
from __future__ import annotations

import os

FORMAT_CHOICES = ("auto", "race", "embrace", "expmrc", "expmrc-pred", "dream", "quail", "cosmosqa")
# Questions held while reading (about 1 KB each in memory); a larger file is read again when stored
KEEP_QUESTIONS = 150_000


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


def run(args) -> int:
    from desktop import formats
    from desktop.commands.progress import Progress, reading
    from desktop.domain.model import DEFAULT_ANNOTATOR
    from desktop.formats import door
    from desktop.store import Store

    annotator = args.annotator or DEFAULT_ANNOTATOR
    from desktop.store import own_files

    for path in args.paths:  # the database or its -wal, picked by mistake: one line, nothing read
        own_files.refuse(path, args.db)
    keep = formats.Budget(KEEP_QUESTIONS)
    read = []
    n = len(args.paths)
    with Progress(100, "%", label="reading") as step:
        for i, path in enumerate(args.paths):
            name = os.path.basename(os.path.normpath(path)) or path
            read.append((path, door.read(path, args.format, verb="imported", keep=keep,
                                         progress=reading(step, name, i, n))))
    questions = sum(formats.count_questions(ds) for _, datasets in read for ds in datasets)
    store = Store.open(args.db, annotator=annotator)
    try:
        with Progress(questions, "questions", label="storing") as step:
            results = store.import_files(read, annotator=annotator, progress=step)
    finally:
        store.close()
    for r in results:
        print(r.summary())
    added = sum(r.questions for r in results)
    print(f"{args.db}: {added} new questions")
    return 0
