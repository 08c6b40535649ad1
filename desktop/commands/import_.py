"""`mcqlens import PATH... [--db annotations.db] [--format auto|race|...] [--annotator NAME]`.

The work is `desktop.app.imports` (read every path first, then store all in one transaction);
here the arguments, and how far each phase is on stderr (`desktop.commands.progress`): a bar
on a terminal, a line every few seconds otherwise.
"""
from __future__ import annotations

from desktop.app import imports
from desktop.commands.progress import Progress, reading

FORMAT_CHOICES = ("auto", "race", "embrace", "expmrc", "expmrc-pred", "dream", "quail", "cosmosqa")


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
    n = len(args.paths)
    with Progress(100, "%", label="reading") as step:
        read = imports.read_paths(args.paths, args.db, args.format,
                                  progress_of=lambda i, name: reading(step, name, i, n))
    with Progress(imports.questions_in(read), "questions", label="storing") as step:
        results = imports.store_read(args.db, read, args.annotator, progress=step)
    for r in results:
        print(r.summary())
    added = sum(r.questions for r in results)
    print(f"{args.db}: {added} new questions")
    return 0
