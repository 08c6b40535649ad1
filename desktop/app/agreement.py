"""Agreement between the annotators of a store (`mcqlens agreement`, Reports → Agreement…).

Every annotator present on an item counts, "imported" included; the adjudicated layer `gold`
does not (see `desktop.reports.agreement_measures`).
"""
from __future__ import annotations

import json
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Callable

from desktop.domain.agreement import GOLD
from desktop.domain.errors import StoreError
from desktop.domain.model import MODEL
from desktop.formats import atomic
from desktop.reports.agreement_html import render
from desktop.reports.agreement_measures import compute
from desktop.store import open_database
from desktop.store.adjudication import disagreeing_items


def agreement_report(store, source: str | None = None) -> dict:
    """The agreement report of every item in `store` (all annotators' layers), with the
    overall agreement of each pair of annotators under "pairs" ("a × b": overall) —
    what `mcqlens agreement` writes and the window's Reports → Agreement… shows."""

    # only the items two or more raters annotated can have agreement; the store reads those alone
    items = list(store.corpus.rated_questions(source=source))
    report = compute(items)
    report["pairs"] = by_pair(items)
    return report


def _raters(q) -> set[str]:
    found = {x.annotator for x in (*q.spans, *q.problems) if x.annotator != GOLD and x.origin != MODEL}
    found |= {a.annotator for a in q.assessments if a.annotator != GOLD}
    found |= {f"expmrc-ref-{u['ref_index'] + 1}" for u in q.extra.get("unlocated_evidence", [])}
    return found


def _only(q, pair: tuple[str, str]):
    """The question with the layers of the two annotators of `pair` alone."""
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




def write_agreement(out: Path, report: dict) -> None:
    """agreement.json and agreement.html in folder `out` (created), each written atomically."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        atomic.write_text(out / "agreement.json", json.dumps(report, ensure_ascii=False, indent=1))
        atomic.write_text(out / "agreement.html", render(report))
    except OSError as exc:
        raise StoreError(f"cannot write {out}: {exc.strerror or exc}") from exc


def agreement_of_database(db_path: str, progress: Callable[[str], None]) -> dict:
    """`agreement_report` through a connection of its own (a worker thread's, the window's Agreement…)."""
    progress("Comparing the annotators' layers…")
    with open_database(db_path, "read", create=False) as store:
        return agreement_report(store)


def disagreeing_in_database(db_path: str, progress: Callable[[str], None]) -> list[str]:
    """The items on which annotators disagree, through a connection of its own (a worker thread's)."""
    with open_database(db_path, "read", create=False) as store:
        return [d["item"] for d in disagreeing_items(store)]
