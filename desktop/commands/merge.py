"""`mcqlens merge OTHER.db|EXPORT.json --db DB`: bring another annotator's work in.

Parses the arguments, runs `desktop.app.merge` (what File → Merge a colleague's work… runs)
and prints what was added and the conflicts kept side by side.
"""
from __future__ import annotations

import json
from pathlib import Path

from desktop.app import merge, paths
from desktop.commands.progress import Progress, reading
from desktop.formats import door


def register(sub) -> None:
    p = sub.add_parser(
        "merge",
        help="bring another annotator's work in (another store or an export file); conflicts are listed",
        description="Merge OTHER (another annotations.db, or an EMBRACE/ExpMRC/RACE export) into --db. "
        "Idempotent; nothing is overwritten: the same annotator with a different value is a conflict, "
        "kept as the layer <annotator>@<label> and listed.",
    )
    p.add_argument("other", metavar="OTHER.db|EXPORT.json")
    p.add_argument("--db", default="annotations.db", help="the store to merge into (default: annotations.db)")
    p.add_argument("--annotator", default=None,
                   help='attribute what the file calls "imported" to this annotator (for a colleague\'s export)')
    p.add_argument("--label", default=None, help="suffix for conflicting versions (default: OTHER's file name)")
    p.add_argument("--conflicts", default=None, metavar="FILE.json", help="also write the conflicts here")
    p.add_argument("--dry-run", action="store_true", help="report what would happen; write nothing")
    p.set_defaults(func=run)


def run(args) -> int:
    door.input_file(args.other, folders=True)  # a pipe or device would block the merge forever
    merge.check_not_itself(args.other, args.db)
    if args.conflicts:  # checked before the merge is committed, not after
        paths.output_file(args.conflicts)
    with Progress(100, "%", label="reading") as step:  # a line every few seconds when stderr is no terminal
        # a bad file: the store is not even opened
        datasets, notes = merge.read_incoming(args.other, args.annotator, reading(step, Path(args.other).name))
    plan = merge.merge_into(args.db, datasets, notes, args.label or Path(args.other).stem, args.dry_run)
    print(merge.summary(plan, args.dry_run))
    for c in plan.conflicts:
        print(f"conflict: item {c.item}, {c.field}, annotator {c.annotator}: ours {json.dumps(c.ours)} / "
              f"theirs {json.dumps(c.theirs)} kept as {c.kept_as}")
    for s in plan.skipped:
        print(f"skipped: item {s['item']}: {s['reason']}")
    if args.conflicts:
        merge.write_conflicts(args.conflicts, plan)
    return 0
