"""`mcqlens report --db DB -o DIR`: items.csv, the EMBRACE figures and index.html for a corpus
(the work: `desktop.app.report.corpus_report`)."""
from __future__ import annotations

import os

from desktop.app import paths
from desktop.app.report import corpus_report
from desktop.commands.progress import Heartbeat
from desktop.domain.errors import StoreError
from desktop.domain.words import count
from desktop.reports.corpus_totals import mode_text
from desktop.store import Store


def register(sub) -> None:
    p = sub.add_parser("report", help="difficulty and acceptability report: items.csv, figures, index.html",
                       description="Write DIR/items.csv (one row per question: Kirsch–Mosenthal points, "
                                   "total, eligibility, acceptability per element and with the linter's "
                                   "suggestions), the figures of EMBRACE (Figs. 3–12) as PNG, DIR/index.html, and the "
                                   "item writer's page DIR/giveaways.html (what gives the key away, with giveaways.csv).")
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="folder to write the report into (created)")
    p.add_argument("--source", default=None, help="only datasets of this source (e.g. embrace)")
    p.add_argument("--annotator", default=None,
                   help="only the imported annotations and this annotator's (default: everyone's)")
    p.set_defaults(func=run)


def run(args) -> int:
    if not os.path.exists(args.db):
        raise StoreError(f"{args.db}: no such database (create it with `mcqlens import`)")
    paths.output_folder(args.out)  # before the work: a file in the way is one line, not a traceback later
    with Store.open(args.db, read_only=True) as store, Heartbeat("report") as beat:
        beat.step(f"writing the report to {args.out}")
        summary = corpus_report(store, args.out, args.source, args.annotator)
    ev = summary["evaluated"]
    print(f"{count(summary['items'], 'item')}, {summary['reviewed']} reviewed, {summary['eligible']} eligible; "
          f"evaluated (continuous) n={ev['n']}"
          + (f" mean {ev['mean']:.2f} median {ev['median']:g} mode {mode_text(ev)}" if ev["n"] else ""))
    for colour, v in summary["colour_agreement"].items():
        print(f"{colour}: {v['recorded_tags']}/{v['items']} {v['expected']} from recorded tags, "
              f"{v['with_suggestions']}/{v['items']} with suggestions")
    g = summary["giveaways"]
    if g["model"]:
        print(f"give-aways: {g['flagged']} of {g['scored']} items scored by {g['model']} have shortcut N < 2, "
              f"{g['explained']} explained; " + ", ".join(f"{k} {n}" for k, n in g["kinds"].items()))
    print(f"wrote {os.path.join(args.out, 'index.html')}, items.csv, giveaways.html and {count(len(summary['figures']), 'figure')} "
          f"in {summary['seconds']:.1f} s")
    return 0
