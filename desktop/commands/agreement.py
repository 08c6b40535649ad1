"""`mcqlens agreement --db DB -o DIR`: agreement between the annotators of a store.

Writes DIR/agreement.json (overall and per item, lowest agreement first) and
DIR/agreement.html.  Every annotator present on an item counts, "imported" included;
the adjudicated layer `gold` does not (see `desktop.reports.agreement_measures`).
"""
from __future__ import annotations

import json
from pathlib import Path

from desktop.domain.words import count


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
    """The agreement report of every item in `store` (all annotators' layers), with the
    overall agreement of each pair of annotators under "pairs" ("a × b": overall) —
    what `mcqlens agreement` writes and the window's Reports → Agreement… shows."""
    from desktop.reports.agreement_measures import compute

    # only the items two or more raters annotated can have agreement; the store reads those alone
    items = list(store.rated_questions(source=source))
    report = compute(items)
    report["pairs"] = by_pair(items)
    return report


def _raters(q) -> set[str]:
    from desktop.domain.agreement import GOLD
    from desktop.domain.model import MODEL

    found = {x.annotator for x in (*q.spans, *q.problems) if x.annotator != GOLD and x.origin != MODEL}
    found |= {a.annotator for a in q.assessments if a.annotator != GOLD}
    found |= {f"expmrc-ref-{u['ref_index'] + 1}" for u in q.extra.get("unlocated_evidence", [])}
    return found


def _only(q, pair: tuple[str, str]):
    """The question with the layers of the two annotators of `pair` alone."""
    from dataclasses import replace

    extra = q.extra
    if "unlocated_evidence" in extra:
        extra = {**extra, "unlocated_evidence": [u for u in extra["unlocated_evidence"]
                                                 if f"expmrc-ref-{u['ref_index'] + 1}" in pair]}
    return replace(q, spans=[s for s in q.spans if s.annotator in pair],
                   problems=[t for t in q.problems if t.annotator in pair],
                   assessments=[a for a in q.assessments if a.annotator in pair], extra=extra)


def by_pair(items) -> dict[str, dict]:
    """{"a × b": overall agreement of a and b on the items both worked on}, the pairs in name order.

    The same measures as the whole report (`compute`), on each question cut down to
    the two annotators' layers, so a pair's κ and F1 are not mixed with a third's."""
    from itertools import combinations

    from desktop.reports.agreement_measures import compute

    shared: dict[tuple[str, str], list] = {}
    for q, text in items:
        raters = _raters(q)
        if len(raters) < 2:
            continue
        for pair in combinations(sorted(raters), 2):
            shared.setdefault(pair, []).append((q, text))
    out = {}
    for pair, group in sorted(shared.items()):
        overall = compute((_only(q, pair), text) for q, text in group)["overall"]
        if overall["items"]:
            out[f"{pair[0]} × {pair[1]}"] = overall
    return out


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
    from desktop.commands.progress import Heartbeat

    store = Store.open(args.db, read_only=True)
    try:
        with Heartbeat("agreement") as beat:
            beat.step("comparing the annotators")
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
    print(f"{count(o['items'], 'item')} with at least two annotators; evidence F1 "
          f"{'—' if ev['value'] is None else format(ev['value'], '.1f')} over {count(ev['items'], 'item')}; "
          f"wrote {out / 'agreement.json'} and {out / 'agreement.html'}")
    return 0
