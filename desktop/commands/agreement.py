"""`mcqlens agreement --db DB -o DIR`: agreement between the annotators of a store.

Writes DIR/agreement.json (overall and per item, lowest agreement first) and
DIR/agreement.html.  Every annotator present on an item counts, "imported" included;
the adjudicated layer `gold` does not (see `desktop.reports.agreement_measures`).
"""
from __future__ import annotations

from pathlib import Path

from desktop.app import paths
from desktop.app.agreement import agreement_report, write_agreement
from desktop.commands.progress import Heartbeat
from desktop.domain.errors import StoreError
from desktop.domain.words import count
from desktop.store import Store


def register(sub) -> None:
    p = sub.add_parser(
        "agreement",
        help="agreement between annotators: evidence/basis span F1 (ExpMRC), κ and α on difficulty, tags",
        description="Agreement between the annotators of a store, per item and overall: evidence and basis "
        "span agreement as ExpMRC measures human performance (evidence_f1, percent), Cohen's/Fleiss' κ and "
        "Krippendorff's ordinal α on the Kirsch–Mosenthal variables and total, problem tags and acceptability.",
    )
    p.add_argument("--db", default="annotations.db", help="the store (default: annotations.db)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for agreement.json and .html")
    p.add_argument("--source", default=None, help="only items of this source (e.g. expmrc, embrace)")
    p.set_defaults(func=run)


def run(args) -> int:
    if not Path(args.db).exists():
        raise StoreError(f"{args.db}: no such database (import something first: mcqlens import FILE --db DB)")
    out = paths.output_folder(args.output)  # checked before the work
    if out.is_dir():
        for name in ("agreement.json", "agreement.html"):
            paths.output_file(out / name)  # overwritten if regular files; a folder or device in the way: refused
    store = Store.open(args.db, read_only=True)
    try:
        with Heartbeat("agreement") as beat:
            beat.step("comparing the annotators")
            report = agreement_report(store, args.source)
    finally:
        store.close()
    write_agreement(out, report)
    o = report["overall"]
    ev = o["evidence_f1"]
    print(f"{count(o['items'], 'item')} with at least two annotators; evidence F1 "
          f"{'—' if ev['value'] is None else format(ev['value'], '.1f')} over {count(ev['items'], 'item')}; "
          f"wrote {out / 'agreement.json'} and {out / 'agreement.html'}")
    return 0
