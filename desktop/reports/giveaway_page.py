"""The report's item writer's page: what gives the key away, across the corpus.

Flagged items are those whose stored shortcut prediction (Q+{O}, no passage) has N < 2
(N = 2^H): they can be answered without the passage.  For each kind of give-away item writers
know (`desktop.domain.giveaway_kinds`) the page counts the flagged items that show it, how
often the model's own give-away words (`mcqlens explain`, stored in the database) are the
words that carry it, and how often the EMBRACE tags recorded for those items — or suggested by
the surface linter — say the same thing; each kind links to examples further down the page,
where the stem and alternatives are shown with the model's give-away words marked.  Also
written: giveaways.csv, one row per flagged item.

Pure functions of the report's tables (`corpus_items.Tables`, `corpus_items.Corpus`): nothing
is computed by a model here; explanations not stored are simply not there (the page says how
to add them).
"""
from __future__ import annotations

import html
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from desktop.domain import giveaway_kinds as K
from desktop.domain import typology as T
from desktop.formats import atomic

FLAG_N = 2.0  # the threshold: N < 2
EXAMPLES = 5  # example items per kind
TOP_WORDS = 5  # the model's strongest give-away words compared with a kind's words
# the explanation shown when several are stored: inference.giveaway's default (`variant()`;
# tests/test_giveaway.py checks that they agree)
VARIANT = "delete+screened+together3"
CSV_COLUMNS = ["item_id", "source", "model", "n_eff", "picked", "key", "kinds", "giveaway", "recorded_tags",
               "suggested_tags"]


def _n_eff(probs: list[float]) -> float:
    h = -sum(p * math.log2(p) for p in probs if p > 0)
    return 2.0 ** max(h, 0.0)


@dataclass
class Flagged:
    item_id: str
    source: str
    stem: str
    alternatives: list[str]
    key: int | None
    picked: int
    n_eff: float
    cues: list = field(default_factory=list)  # giveaway_kinds.Cue
    giveaway: list[dict] | None = None  # the model's give-away words (strongest first), None: not explained
    recorded: set = field(default_factory=set)  # recorded EMBRACE types of the item
    suggested: set = field(default_factory=set)  # the linter's suggested types


def _model(shortcut) -> str | None:
    """The model with the most stored shortcut predictions."""
    counts = Counter(row[1] for row in shortcut)
    return max(counts, key=lambda m: (counts[m], m)) if counts else None


def flagged_ids(shortcut, max_n: float = FLAG_N) -> tuple[str | None, list[str]]:
    """(the model the page counts, the ids of its flagged items) of the stored shortcut rows."""
    model = _model(shortcut)
    return model, [row[0] for row in shortcut if row[1] == model and _n_eff([float(p) for p in row[3]]) < max_n]


def flagged_items(corpus, max_n: float = FLAG_N) -> tuple[str | None, int, list[Flagged]]:
    """(model id, items it scored, the flagged items in corpus order with their cues, give-away
    words and tags)."""
    tables = corpus.tables
    model = _model(tables.shortcut)
    if model is None:
        return None, 0, []
    it = tables.items
    text = {i: (src, stem, list(alts)) for i, src, stem, alts in
            zip(it["item_id"], it["source"], it["stem"], it["alternatives"])}
    explained: dict[str, dict] = {}
    for data in tables.explanations:
        if data.get("model_id") != model:
            continue
        have = explained.get(data["item_id"])
        if have is None or data.get("variant", data.get("method")) == VARIANT:
            explained[data["item_id"]] = data
    recorded = _types(corpus.recorded)
    suggested = _types(corpus.suggested)
    scored, out = 0, []
    for item_id, m, key, probs, _extra in tables.shortcut:
        if m != model or item_id not in text:
            continue
        scored += 1
        probs = [float(p) for p in probs]
        n = _n_eff(probs)
        if not n < max_n:
            continue
        source, stem, alts = text[item_id]
        picked = max(range(len(probs)), key=probs.__getitem__)
        f = Flagged(item_id, source, stem, alts, key, picked, n, K.find(stem, alts, picked),
                    recorded=recorded.get(item_id, set()), suggested=suggested.get(item_id, set()))
        ex = explained.get(item_id)
        # an explanation of other text (the item was edited since) is not this item's
        if ex is not None and _texts_match(ex, stem, alts):
            f.giveaway = _listed(ex)
        out.append(f)
    return model, scored, out


def _texts_match(ex: dict, stem: str, alts: list[str]) -> bool:
    elements = {"stem": stem, **{K.LETTERS[i]: a for i, a in enumerate(alts)}}
    return all(w["element"] in elements and elements[w["element"]][w["start"]:w["end"]] == w["word"]
               for w in ex.get("words", []))


def _listed(ex: dict, min_effect: float = 0.01) -> list[dict]:
    """The give-away words of a stored explanation, strongest first (as `Explanation.giveaway`)."""
    order = {"stem": -1, **{c: i for i, c in enumerate(K.LETTERS)}}
    words = sorted(ex.get("words", []), key=lambda w: (-w["effect"], order.get(w["element"], 99), w["start"]))
    out = []
    for w in words:
        if w["effect"] < min_effect:
            break
        if any(o["element"] == w["element"] and o["start"] < w["end"] and w["start"] < o["end"] for o in out):
            continue
        out.append(w)
    return out


def _types(tags) -> dict[str, set]:
    """The EMBRACE types tagged on each item (free notes, which name no type, left out)."""
    out: dict[str, set] = {}
    if tags is not None and len(tags):
        for item_id, typ in zip(tags["item_id"], tags["type"]):
            if typ != "note":
                out.setdefault(item_id, set()).add(typ)
    return out


def summarise(flagged: list[Flagged]) -> list[dict]:
    """Per kind (then "none of these"): items, confirmed by the model's words, tag agreement, examples."""
    rows = []
    for kind in K.KINDS:
        with_it = [f for f in flagged if any(c.kind == kind for c in f.cues)]
        related = set(K.RELATED_TYPES[kind])
        explained = [f for f in with_it if f.giveaway is not None]
        checks = [K.confirmed(next(c for c in f.cues if c.kind == kind), f.giveaway, TOP_WORDS) for f in explained]
        confirmed = [f for f, ok in zip(explained, checks) if ok]
        rows.append({
            "kind": kind, "name": K.NAMES[kind], "description": K.DESCRIPTIONS[kind], "items": len(with_it),
            "explained": len(explained),
            "confirmed": None if kind == K.LONGEST else len(confirmed),
            "recorded": sum(bool(f.recorded & related) for f in with_it),
            "suggested": sum(bool(f.suggested & related) for f in with_it),
            "related": sorted(related),
            # examples: the model's words carry the kind first, then the rest in corpus order
            "examples": [f.item_id for f in (confirmed + [f for f in with_it if f not in confirmed])[:EXAMPLES]],
        })
    none = [f for f in flagged if not f.cues]
    rows.append({"kind": "none", "name": "None of these kinds",
                 "description": "world knowledge, or a give-away not named here", "items": len(none),
                 "explained": None, "confirmed": None,
                 "recorded": sum(K.ANSWERABLE in f.recorded for f in none),
                 "suggested": sum(K.ANSWERABLE in f.suggested for f in none), "related": [K.ANSWERABLE],
                 "examples": [f.item_id for f in none[:EXAMPLES]]})
    return rows


def recurring_words(flagged: list[Flagged], top: int = 15) -> list[tuple[str, str, int]]:
    """(word, where: stem / picked / distractor, flagged items) of the model's strongest give-away
    words across the corpus, most frequent first."""
    counts: Counter = Counter()
    for f in flagged:
        for w in (f.giveaway or [])[:TOP_WORDS]:
            where = "stem" if w["element"] == "stem" else ("picked" if w["element"] == K.LETTERS[f.picked]
                                                          else "distractor")
            counts[(w["word"].lower(), where)] += 1
    return [(w, where, n) for (w, where), n in counts.most_common(top) if n > 1]


def csv_rows(model: str, flagged: list[Flagged]) -> list[dict]:
    return [{"item_id": f.item_id, "source": f.source, "model": model, "n_eff": round(f.n_eff, 4),
             "picked": K.LETTERS[f.picked], "key": "" if f.key is None else K.LETTERS[f.key],
             "kinds": "; ".join(c.kind for c in f.cues),
             "giveaway": "" if f.giveaway is None else json.dumps(f.giveaway[:TOP_WORDS], ensure_ascii=False),
             "recorded_tags": "; ".join(sorted(f.recorded)), "suggested_tags": "; ".join(sorted(f.suggested))}
            for f in flagged]


def anchor(item_id: str) -> str:
    return "item-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in item_id)


def _marked(text: str, element: str, f: Flagged) -> str:
    """The element's text with the model's give-away words marked (effect on hover) and the
    kinds' words underlined."""
    marks: dict[int, tuple[int, str]] = {}
    for w in (f.giveaway or [])[:TOP_WORDS]:
        if w["element"] == element:
            marks[w["start"]] = (w["end"], f"<mark title='effect {w['effect']:+.3f}'>")
    cue_words = {(s, e) for c in f.cues if c.kind != K.LONGEST for el, s, e in c.words if el == element}
    out, pos = [], 0
    spans = sorted({(s, e, "m") for s, (e, _) in marks.items()} | {(s, e, "u") for s, e in cue_words})
    for s, e, how in spans:
        if s < pos:
            continue
        out.append(html.escape(text[pos:s]))
        word = html.escape(text[s:e])
        if how == "m":
            under = (s, e) in cue_words
            out.append(marks[s][1] + (f"<u>{word}</u>" if under else word) + "</mark>")
        else:
            out.append(f"<u>{word}</u>")
        pos = e
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _pct(n: int, d: int) -> str:
    return f"{n} ({100 * n / d:.0f}%)" if d else "–"


def page(model: str | None, scored: int, flagged: list[Flagged], corpus_items: int) -> str:
    """giveaways.html."""
    head = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>What gives the key away — MCQ Lens</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}mark{background:#F8D4B9;color:#222}.item{border-left:4px solid #E66100;padding:.2em 1em;
margin:1em 0}.note{background:#f5f5f0;padding:.6em 1em;border-left:4px solid #999}.muted{color:#555}</style>
</head><body>
<p><a href="index.html">← corpus report</a></p>
<h1>What gives the key away</h1>
"""
    if model is None:
        return head + ("<p>No shortcut (Q+{O}) predictions are stored in this database: run "
                       "<code>mcqlens score --db DB</code>, then <code>mcqlens explain --db DB --flagged -o "
                       "why.csv</code>, and write the report again.</p></body></html>\n")
    explained = sum(f.giveaway is not None for f in flagged)
    on_key = sum(f.key == f.picked for f in flagged)
    rows = summarise(flagged)
    by_id = {f.item_id: f for f in flagged}
    n = len(flagged)
    table = []
    for r in rows:
        links = " ".join(f"<a href='#{anchor(i)}'>{html.escape(i)}</a>" for i in r["examples"])
        conf = ("–" if r["confirmed"] is None else f"{r['confirmed']} of {r['explained']}")
        related = ", ".join(T.TYPES[t].name if t in T.TYPES else t for t in r["related"])
        table.append(f"<tr><td><b>{html.escape(r['name'])}</b><br><span class='muted'>"
                     f"{html.escape(r['description'])}</span></td><td>{_pct(r['items'], n)}</td><td>{conf}</td>"
                     f"<td>{_pct(r['recorded'], r['items'])}</td><td>{_pct(r['suggested'], r['items'])}</td>"
                     f"<td class='muted'>{html.escape(related)}</td><td>{links}</td></tr>")
    words = recurring_words(flagged)
    words_html = ("<table><tr><th>word</th><th>where</th><th>flagged items</th></tr>" + "".join(
        f"<tr><td>{html.escape(w)}</td><td>{where}</td><td>{k}</td></tr>" for w, where, k in words) + "</table>"
                  if words else "<p class='muted'>No give-away word recurs among the explained items.</p>")
    shown = list(dict.fromkeys(i for r in rows for i in r["examples"]))
    entries = []
    for i in shown:
        f = by_id[i]
        kinds = ", ".join(c.name for c in f.cues) or "none of the kinds above"
        alts = "".join(
            f"<li>{K.LETTERS[j]}{' ▶' if j == f.picked else ''} {_marked(a, K.LETTERS[j], f)}"
            f"{' <b>(key)</b>' if f.key == j else ''}</li>" for j, a in enumerate(f.alternatives))
        words_note = ("" if f.giveaway is not None else
                      "<br><span class='muted'>no give-away words stored for this item (mcqlens explain)</span>")
        entries.append(
            f"<div class='item' id='{anchor(i)}'><p><b>{html.escape(i)}</b> <span class='muted'>({html.escape(f.source)}"
            f"; shortcut N = {f.n_eff:.2f}, picks {K.LETTERS[f.picked]})</span><br>{_marked(f.stem, 'stem', f)}</p>"
            f"<ul style='list-style:none;padding-left:1em'>{alts}</ul><p class='muted'>kinds: {html.escape(kinds)}"
            f" · recorded tags: {html.escape(', '.join(sorted(f.recorded)) or 'none')} · suggested: "
            f"{html.escape(', '.join(sorted(f.suggested)) or 'none')}{words_note}</p></div>")
    return head + f"""<p>{n} of the {scored} items scored by <code>{html.escape(model)}</code> ({corpus_items} in the
corpus) have a shortcut N below {FLAG_N:g}: the model, without the passage, is nearly sure of one alternative — the
key in {on_key} of them (the item can be answered without reading), a distractor in {n - on_key} (that distractor
draws a reader who has not read). For {explained} of them the model's give-away words are stored (<code>mcqlens explain --db DB --flagged -o why.csv</code>
adds the rest). Every flagged item is in <a href="giveaways.csv">giveaways.csv</a>.</p>
<h2>Kinds of give-away</h2>
<table><tr><th>kind</th><th>flagged items</th><th>the model's {TOP_WORDS} strongest words carry it</th>
<th>EMBRACE tag recorded</th><th>suggested by the linter</th><th>tags that agree</th><th>examples</th></tr>
{''.join(table)}</table>
<p class="note">A kind is found in the item's own words, for the alternative the shortcut model picks. "The model's
words carry it": among the explained items with this kind, those where one of the model's {TOP_WORDS} strongest
give-away words is a word of the kind (the longest alternative has no such word: –). "EMBRACE tag recorded" /
"suggested by the linter": the items with this kind that carry one of the tags in the next column, recorded by an
annotator or suggested by the surface linter; "answerable without reading" is the one tag that says it of every
kind, and the linter never suggests it.</p>
<h2>Give-away words that recur</h2>
{words_html}
<h2>Examples</h2>
<p class="muted">Marked: the model's strongest give-away words (the effect on hover); underlined: the words of a kind.
▶: the alternative the shortcut model picks.</p>
{''.join(entries)}
</body></html>
"""


def write(corpus, out_dir) -> dict:
    """giveaways.html and giveaways.csv in `out_dir`; returns the summary for the command line."""
    import pandas as pd

    out = Path(out_dir)
    model, scored, flagged = flagged_items(corpus)
    atomic.write_text(out / "giveaways.html", page(model, scored, flagged, len(corpus.frame)))
    with atomic.replacing(out / "giveaways.csv") as tmp:
        pd.DataFrame(csv_rows(model or "", flagged), columns=CSV_COLUMNS).to_csv(tmp, index=False)
    return {"model": model, "scored": scored, "flagged": len(flagged),
            "explained": sum(f.giveaway is not None for f in flagged),
            "kinds": {r["kind"]: r["items"] for r in summarise(flagged)}}
