"""`mcqlens agreement --db DB -o DIR`: agreement between the annotators of a store.

Writes DIR/agreement.json (overall and per item, lowest agreement first) and
DIR/agreement.html.  Every annotator present on an item counts, "imported" included;
the adjudicated layer `gold` does not (see `desktop.reports.agreement_measures`).
"""
from __future__ import annotations

import json
from pathlib import Path


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


def agreement_report(store, source: str | None = None) -> dict:
    """The agreement report of every item in `store` (all annotators' layers).  Only the
    items two or more raters annotated can have agreement; the store reads those alone."""
    from desktop.reports.agreement_measures import compute

    return compute(store.rated_questions(source=source))


def run(args) -> int:
    from desktop.domain.errors import StoreError
    from desktop.reports.agreement_html import render
    from desktop.store import Store

    from desktop.commands import paths

    if not Path(args.db).exists():
        raise StoreError(f"{args.db}: no such database (import something first: mcqlens import FILE --db DB)")
    out = paths.output_folder(args.output)  # checked before the work
    if out.is_dir():
        for name in ("agreement.json", "agreement.html"):
            paths.output_file(out / name)  # overwritten if regular files; a folder or device in the way: refused
    store = Store.open(args.db, read_only=True)
    try:
        report = agreement_report(store, args.source)
    finally:
        store.close()
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "agreement.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        (out / "agreement.html").write_text(render(report), encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"cannot write {out}: {exc.strerror or exc}") from exc
    o = report["overall"]
    ev = o["evidence_f1"]
    print(f"{o['items']} items with at least two annotators; evidence F1 "
          f"{'—' if ev['value'] is None else format(ev['value'], '.1f')} over {ev['items']} items; "
          f"wrote {out / 'agreement.json'} and {out / 'agreement.html'}")
    return 0
