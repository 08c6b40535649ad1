"""`mcqlens export embrace|expmrc|race|csv|predictions --db DB -o OUT [--annotator NAME|--everyone] [--force]`.

Parses the arguments, runs `desktop.app.export.export` (the function File → Export… runs
too; `predictions`: `desktop.commands.export_predictions`) and prints its summary.
"""
from __future__ import annotations

from desktop.app.export import export
from desktop.app.export_kinds import KINDS, LAYERS, ON_TOP
from desktop.commands import export_predictions
from desktop.commands.progress import Heartbeat
from desktop.store import Store


def register(sub) -> None:
    p = sub.add_parser("export", help="write the annotations as EMBRACE, ExpMRC, RACE or a CSV table, "
                                      "or the stored model predictions",
                       description="Export stored items. Without edits, EMBRACE and ExpMRC exports reproduce "
                                   "the imported files. " + LAYERS + " " + ON_TOP)
    p.add_argument("kind", choices=KINDS, help="output format")
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file (race: .json list, .jsonl, or a folder of .txt files)")
    layer = p.add_mutually_exclusive_group()
    layer.add_argument("--annotator", default=None,
                       help="NAME's layer on top of the imported annotations, as NAME's window shows them "
                            "(default: everyone's layers, the adjudicated 'gold' layer on top where it exists)")
    layer.add_argument("--everyone", action="store_true",
                       help="every annotator's layers, later over earlier, without putting 'gold' on top")
    p.add_argument("--source", default=None,
                   help="which stored source to export (default: embrace its own; expmrc: the ExpMRC items and "
                        "every other item with evidence; race, csv: all)")
    p.add_argument("--file", default=None, help="only items imported from this file (path or name)")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.kind == "predictions":
        return export_predictions.run(args)
    # a line every few seconds while a large database is read and written (stderr, any stream)
    with _open(args.db) as store, Heartbeat("export") as beat:
        result = export(store, args.kind, args.output, annotator=args.annotator, everyone=args.everyone,
                        source=args.source, file=args.file, force=args.force, progress=beat.step)
    print(result.summary())
    if result.renamed:
        first = ", ".join(f"{i!r} -> {name}" for i, name in result.renamed[:3])
        print(f"note: {len(result.renamed)} passage id(s) are not safe or unique file names and were written under "
              f"other names ({first}{', ...' if len(result.renamed) > 3 else ''}); the ids stay in the records; "
              f"the list is in {result.out / 'ids.tsv'}")
    return 0


def _open(db: str):
    return Store.open(db, read_only=True)  # an export never writes to the database
