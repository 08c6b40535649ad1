"""The corpus report: items.csv, the figures of EMBRACE (Figs. 3–12) and index.html.

`write_report(datasets, out_dir)` is a pure function of the datasets (from the store or
from files); `mcqlens report` feeds it from the database.
"""
from __future__ import annotations

import html
import time
from pathlib import Path

from desktop.domain import difficulty as D
from desktop.domain.time_on_item import IDLE_LIMIT_S
from desktop.formats import atomic

from . import corpus_figures as F
from . import corpus_items as I
from . import giveaway_page, lint_eval
from .corpus_totals import SEED_STATS, mode_text, total_stats


def write_report(source, out_dir: str | Path, figures: bool = True) -> dict:
    """Write items.csv, the PNG figures and index.html into `out_dir`; returns a summary.

    `source`: the datasets, or `corpus_items.Tables` (from the store: `tables_from_store`)."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = source if isinstance(source, I.Tables) else I.tables_from_datasets(list(source))
    corpus = I.build(tables)
    df = corpus.frame
    with atomic.replacing(out / "items.csv") as tmp:
        df.to_csv(tmp, index=False)

    scored = df[df.eligible & df.total.notna()]
    evaluated = scored[scored.text_format == "continuous"]  # the seed's difficulty analysis (5.2)
    stats_all = total_stats(list(scored.total))
    stats_eval = total_stats(list(evaluated.total))

    exceptions = I.colour_exceptions(corpus)
    lint = lint_eval.table(corpus)
    with atomic.replacing(out / "lint.csv") as tmp:
        lint.to_csv(tmp, index=False)
    import pandas as pd
    with atomic.replacing(out / "exceptions.csv") as tmp:
        pd.DataFrame(exceptions, columns=["item_id", "file_colour", "basis", "expected", "got", "why"]).to_csv(
            tmp, index=False)

    giveaways = giveaway_page.write(corpus, out)
    names = []
    if figures:
        names.append(F.acceptability_matrix(df, out))
        names += F.problems_per_element(corpus, out)
        names.append(F.total_histogram(list(evaluated.total), stats_eval, out))
        names.append(F.toi_distribution(evaluated, out))
        names.append(F.tom_distribution(evaluated, out))
        names.append(F.pod_distribution(evaluated, out))
        names.append(F.bases_heatmaps(corpus, set(evaluated.item_id), out))
    summary = {
        "items": len(df), "eligible": int(df.eligible.sum()), "reviewed": int(df.reviewed.sum()),
        "scored": stats_all, "evaluated": stats_eval,
        "acceptability": df.acceptability.value_counts().to_dict(),
        "acceptability_with_suggestions": df.acceptability_with_suggestions.value_counts().to_dict(),
        "colour_agreement": _colour_agreement(df),
        "exceptions": exceptions, "figures": names, "giveaways": giveaways,
        "time_on_item_s": float(df.time_on_item_s.sum()) if df.time_on_item_s.notna().any() else None,
    }
    atomic.write_text(out / "index.html", _html(df, summary, lint))
    summary["seconds"] = time.perf_counter() - t0
    return summary


def _colour_agreement(df) -> dict:
    out = {}
    for colour, want in I.COLOUR_ACCEPTABILITY.items():
        sub = df[(df.file_colour == colour) & df.reviewed]
        if len(sub):
            out[colour] = {"items": len(sub), "expected": want,
                           "recorded_tags": int((sub.acceptability == want).sum()),
                           "with_suggestions": int((sub.acceptability_with_suggestions == want).sum())}
    return out


def _giveaway_line(g: dict) -> str:
    if not g.get("model"):
        return "No shortcut predictions are stored (mcqlens score)."
    return (f"{g['flagged']} of the {g['scored']} items scored by {html.escape(g['model'])} have a shortcut N below 2; "
            f"the model's give-away words are stored for {g['explained']} of them.")


def _fmt(x) -> str:
    return "–" if x != x else f"{x:.2f}" if isinstance(x, float) else str(x)


def _html(df, s: dict, lint) -> str:
    e, a = s["evaluated"], s["scored"]
    stats_rows = "".join(
        f"<tr><td>{html.escape(label)}</td><td>{st['n']}</td><td>{_fmt(st['mean'])}</td>"
        f"<td>{_fmt(st['median'])}</td><td>{mode_text(st)}</td></tr>"
        for label, st in (("evaluated: eligible, continuous texts (as the seed's section 5.2)", e),
                          ("all eligible and scored (incl. partly continuous)", a),
                          ("EMBRACE seed, 1,181 evaluated MCQs (reported)", {**SEED_STATS, "modes": [14]})))
    colour = "".join(
        f"<tr><td>{c}</td><td>{v['items']}</td><td>{v['expected']}</td><td>{v['recorded_tags']} "
        f"({100 * v['recorded_tags'] / v['items']:.1f}%)</td><td>{v['with_suggestions']} "
        f"({100 * v['with_suggestions'] / v['items']:.1f}%)</td></tr>"
        for c, v in s["colour_agreement"].items())
    exc = "".join(f"<tr><td>{html.escape(x['item_id'])}</td><td>{x['file_colour']}</td><td>{x['basis']}</td>"
                  f"<td>{x['got']}</td><td>{html.escape(x['why'])}</td></tr>" for x in s["exceptions"])
    accept = "".join(f"<tr><td>{html.escape(c)}</td><td>{s['acceptability'].get(c, 0)}</td></tr>"
                     for c in I.CLASSES)
    figs = "".join(f'<figure><img src="{n}" alt="{n}"><figcaption>{n}</figcaption></figure>' for n in s["figures"])
    lint_html = lint.to_html(index=False, float_format=lambda v: f"{v:.2f}", na_rep="–", border=0)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>MCQ Lens corpus report</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}}
figure{{margin:1.5em 0}}img{{max-width:100%}}.note{{background:#f5f5f0;padding:.6em 1em;border-left:4px solid #999}}</style>
</head><body>
<h1>Corpus report</h1>
<p>{s['items']} MCQs, {s['reviewed']} reviewed; {s['eligible']} eligible for difficulty evaluation (not
non-continuous, content-based, no severe problem, every variable scored). Per-item values are in
<a href="items.csv">items.csv</a> (with <code>time_on_item_s</code>: the seconds between each annotator's
consecutive edits of the item, each gap counted up to {IDLE_LIMIT_S:g} s, summed over the annotators; see
docs/CONTRACTS.md); the
colour exceptions in <a href="exceptions.csv">exceptions.csv</a>, the linter's scores in
<a href="lint.csv">lint.csv</a>.</p>
<h2>Total difficulty</h2>
<table><tr><th>items</th><th>n</th><th>mean</th><th>median</th><th>mode</th></tr>{stats_rows}</table>
<p class="note">The totals are computed with Appendix A's points (POD literal 1.5 and synonymous 2, as in the
appendix; section 4.2.8's prose says 2 and 2.5). On the released annotations this arithmetic gives about one
point less than the seed's reported mean 13.09, median 13 and mode 14. The figures show the statistics as
computed; the scale is not adjusted to match. Theoretical minimum {D.THEORETICAL_MIN:g}, maximum
{D.THEORETICAL_MAX:g}, maximum without TOC {D.THEORETICAL_MAX_WITHOUT_TOC:g}.</p>
<h2>Acceptability and the files' colours</h2>
<table><tr><th>file colour</th><th>items</th><th>expected</th><th>from recorded tags</th>
<th>with the linter's suggestions</th></tr>{colour}</table>
<p>Acceptability is the worst tier of an element's problems (severe → unacceptable, moderate → partially,
mild → mainly acceptable). Notes that name no problem type do not count. An item nobody reviewed (no
assessment and no recorded problem tag) is <b>not reviewed</b>, its own class, never "acceptable":
{s['items'] - s['reviewed']} of the {s['items']} MCQs here. The file colours are compared on reviewed items.</p>
<table><tr><th>acceptability (recorded tags)</th><th>MCQs</th></tr>{accept}</table>
<h3>Exceptions</h3>
<table><tr><th>item</th><th>colour</th><th>basis</th><th>computed</th><th>why</th></tr>{exc}</table>
<h2>Surface linter against the recorded tags</h2>
<p>Units: a passage, a stem, or the alternatives of a question. A detection is right when a problem of its
type is recorded on the same unit. "extra spaces" and "missing spaces" are families: EMBRACE records a tool
label and its "(punctuation)" variant for one problem, so they are scored together. Green items record no
problem, so every detection there is a false positive; a low precision elsewhere partly reflects problems the
annotators did not record (see the exceptions above). "–": undefined (precision: nothing detected; recall:
nothing of that type recorded, so there is nothing to find).</p>
{lint_html}
<h2>What gives the key away</h2>
<p>{_giveaway_line(s['giveaways'])} See <a href="giveaways.html">the item writer's page</a>: the kinds of give-away
among the items the shortcut model answers without the passage, with examples.</p>
<h2>Figures</h2>
<p>Figs. 8–12 show the evaluated MCQs (eligible, continuous texts), like the seed's section 5.2; Figs. 3–7 all
MCQs.</p>
{figs}
</body></html>
"""
