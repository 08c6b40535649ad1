"""The agreement report as one self-contained HTML page (no scripts, no external files)."""
from __future__ import annotations

from html import escape
from typing import Any

from desktop.domain.difficulty import NAMES
from desktop.domain.words import count

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
.low{background:#fde2e1}.note{color:#555;font-size:.9em}
"""


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return escape(str(value))


def _overall(o: dict) -> str:
    out = ["<h2>Overall</h2><table><tr><th>measure</th><th>value</th><th>items</th></tr>"]
    out.append(f"<tr><td>evidence F1 (ExpMRC cross-validation, %)</td><td class=num>"
               f"{_num(o['evidence_f1']['value'], 1)}</td><td class=num>{o['evidence_f1']['items']}</td></tr>")
    out.append(f"<tr><td>basis F1 (%)</td><td class=num>{_num(o['basis_f1']['value'], 1)}</td>"
               f"<td class=num>{o['basis_f1']['items']}</td></tr>")
    t = o["difficulty_total"]
    out.append(f"<tr><td>difficulty total: Krippendorff's α (ordinal)</td><td class=num>{_num(t['alpha_ordinal'])}"
               f"</td><td class=num>{t['items']}</td></tr>")
    out.append(f"<tr><td>problem tags: κ ({escape(o['tags']['kappa_method'])})</td><td class=num>"
               f"{_num(o['tags']['kappa'])}</td><td class=num>{o['tags']['items']}</td></tr>")
    a = o["acceptability"]
    out.append(f"<tr><td>acceptability: κ ({escape(a['kappa_method'])}); α ordinal {_num(a['alpha_ordinal'])}"
               f"</td><td class=num>{_num(a['kappa'])}</td><td class=num>{a['items']}</td></tr></table>")
    out.append("<h3>Kirsch–Mosenthal variables</h3><table><tr><th>variable</th><th>κ</th><th>method</th>"
               "<th>κ units (complete)</th><th>units left out of κ</th>"
               "<th>α ordinal (points)</th><th>units</th><th>annotators</th></tr>")
    for var, c in o["difficulty"].items():
        out.append(f"<tr><td>{escape(NAMES.get(var, var))} ({var.upper()})</td><td class=num>{_num(c['kappa'])}</td>"
                   f"<td>{escape(c['kappa_method'])}</td><td class=num>{c.get('kappa_units', '—')}</td>"
                   f"<td class=num>{c.get('kappa_incomplete_dropped', '—')}</td>"
                   f"<td class=num>{_num(c.get('alpha_ordinal'))}</td>"
                   f"<td class=num>{c['units']}</td><td>{escape(', '.join(c['annotators']))}</td></tr>")
    out.append("</table>")
    dropped = [var.upper() for var, c in o["difficulty"].items() if c.get("kappa_incomplete_dropped")]
    for name in ("tags", "acceptability"):
        if o[name].get("kappa_incomplete_dropped"):
            dropped.append(name)
    out.append("<p class=note>κ is computed only on <b>complete units</b>: the items every annotator of that "
               "measure rated (listwise deletion, as R's irr::kappam.fleiss and INCEpTION do; Fleiss' κ over units "
               "rated by different numbers of annotators is not Fleiss' κ). Krippendorff's α uses every unit with "
               "two or more values and is the coefficient to read where units are incomplete"
               + (f"; here: {escape(', '.join(dropped))}." if dropped else "; here every unit is complete.")
               + "</p>")
    return "".join(out)


def _items(rows: list[dict], limit: int) -> str:
    cols = [("evidence_f1", "evidence F1"), ("basis_f1", "basis F1"), ("difficulty_agreement", "difficulty"),
            ("tag_agreement", "tags"), ("acceptability_agreement", "acceptability")]
    out = [f"<h2>Items, lowest agreement first</h2><p class=note>{count(len(rows), 'item')} with at least two "
           f"annotators; the first {min(limit, len(rows))} shown (all of them are in agreement.json). "
           "Percentages; the item's agreement is the mean of the measures it has.</p>",
           "<table><tr><th>item</th><th>source</th><th>agreement</th>"
           + "".join(f"<th>{escape(t)}</th>" for _, t in cols) + "<th>annotators</th></tr>"]
    for r in rows[:limit]:
        names = sorted({a for k in ("evidence_annotators", "basis_annotators", "difficulty_annotators")
                        for a in r.get(k, [])} | set(r.get("tags", {})))
        low = " class=low" if r["agreement"] is not None and r["agreement"] < 50 else ""
        out.append(f"<tr{low}><td>{escape(r['item'])}</td><td>{escape(r['source'])}</td>"
                   f"<td class=num>{_num(r['agreement'], 1)}</td>"
                   + "".join(f"<td class=num>{_num(r.get(k), 1)}</td>" for k, _ in cols)
                   + f"<td>{escape(', '.join(names))}</td></tr>")
    out.append("</table>")
    return "".join(out)


def render(report: dict, limit: int = 500) -> str:
    """The report dict of `agreement_measures.compute` as an HTML page."""
    return ("<!doctype html><html><head><meta charset=utf-8><title>MCQ Lens: annotator agreement</title>"
            f"<style>{_STYLE}</style></head><body><h1>Annotator agreement</h1>"
            "<p class=note>Span agreement as ExpMRC measures human performance: each annotator's text scored "
            "with the ExpMRC evidence F1 against the other annotators' texts, averaged over every choice of "
            "held-out annotator. κ: Cohen's for two annotators, Fleiss' for more, on the units every annotator "
            "rated (see below). The annotator "
            "<code>gold</code> (adjudicated) is not a rater.</p>"
            + _overall(report["overall"]) + _items(report["items"], limit) + "</body></html>")
