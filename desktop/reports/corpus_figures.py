"""The corpus report's figures (EMBRACE Figs. 3–12) as PNG files; matplotlib imported inside."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from desktop.domain import difficulty as D
from desktop.domain import typology as T
from desktop.formats import atomic

from .corpus_totals import mode_text

ACC_COLOURS = {T.ACCEPTABLE: "#4daf4a", T.MAINLY: "#ffd92f", T.PARTIALLY: "#ff7f00", T.UNACCEPTABLE: "#e41a1c"}
TIER_COLOURS = {T.MILD: "#ffd92f", T.MODERATE: "#ff7f00", T.SEVERE: "#e41a1c"}
SHORT = {T.ACCEPTABLE: "A", T.MAINLY: "mA", T.PARTIALLY: "pA", T.UNACCEPTABLE: "uA"}


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 10, "axes.titlesize": 12, "axes.spines.top": False,
                         "axes.spines.right": False})
    return plt


def _save(fig, path: Path) -> str:
    fig.tight_layout()
    with atomic.replacing(path) as tmp:  # the suffix stays: matplotlib picks PNG by it
        fig.savefig(tmp, dpi=110)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path.name


def acceptability_matrix(df, out: Path) -> str:
    """Fig. 3: reviewed MCQs per acceptability of the text (rows) and of the MCQ unit (columns);
    the MCQs nobody reviewed are counted in the title, not in a cell."""
    plt = _plt()
    order = list(T.ACCEPTABILITY)
    reviewed = df[df.reviewed]
    counts = reviewed.groupby(["text_acceptability", "mcq_unit_acceptability"]).size()
    m = [[int(counts.get((r, c), 0)) for c in order] for r in order]
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    vmax = max(max(row) for row in m) or 1
    ax.imshow(m, cmap="Blues", vmin=0, vmax=vmax * 1.3)
    for i, row in enumerate(m):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=12,
                    color="white" if v > vmax * 0.7 else "black")
    ax.set_xticks(range(4), [SHORT[o] for o in order])
    ax.set_yticks(range(4), [SHORT[o] for o in order])
    ax.set_xlabel("MCQ unit (question, alternatives, combinations)")
    ax.set_ylabel("text")
    unreviewed = len(df) - len(reviewed)
    ax.set_title(f"Fig. 3 — MCQs per problem category (n={len(reviewed)} reviewed)"
                 + (f"\n{unreviewed} MCQs nobody reviewed are not counted" if unreviewed else ""))
    for s in ax.spines.values():
        s.set_visible(False)
    fig.text(0.01, 0.01, "A acceptable, mA mainly, pA partially acceptable, uA unacceptable", fontsize=8)
    return _save(fig, out / "fig03_acceptability_matrix.png")


def problems_per_element(corpus, out: Path) -> list[str]:
    """Figs. 4–7: MCQs with each problem type, per element; recorded tags and the linter's extra ones."""
    import pandas as pd
    plt = _plt()
    groups = [("fig04_problems_text.png", "Fig. 4 — problems in texts", {"text"}),
              ("fig05_problems_stems.png", "Fig. 5 — problems in MCQ stems", {"question"}),
              ("fig06_problems_alternatives.png", "Fig. 6 — problems in MCQ alternatives",
               {"alternatives", "between-alternatives"}),
              ("fig07_problems_combinations.png", "Fig. 7 — problems between text and MCQ elements",
               {"question-text", "text-alternatives", "question-alternatives"})]
    names = []
    for fname, title, elements in groups:
        rec_pairs = _pairs(corpus.recorded, elements, skip_notes=True)
        sug_pairs = _pairs(corpus.suggested, elements)
        if "text" in elements and len(corpus.text_suggested):  # each question of the passage
            text = _pairs(corpus.text_suggested.rename(columns={"passage_id": "item_id"}), elements)
            text = text.rename(columns={"item_id": "passage_id"}).merge(
                corpus.passage_units[["passage_id", "item_id"]], on="passage_id")[["item_id", "type"]]
            sug_pairs = pd.concat([sug_pairs, text], ignore_index=True).drop_duplicates()
        if len(sug_pairs) and len(rec_pairs):
            both = sug_pairs.merge(rec_pairs, on=["item_id", "type"], how="left", indicator=True)
            sug_pairs = both[both["_merge"] == "left_only"]
        rec = rec_pairs.groupby("type").size().to_dict() if len(rec_pairs) else {}
        sug = sug_pairs.groupby("type").size().to_dict() if len(sug_pairs) else {}
        rec, sug = Counter(rec), Counter(sug)
        types = sorted(set(rec) | set(sug), key=lambda k: ("severe moderate mild".split().index(T.tier(k)),
                                                           -rec[k], k))
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.42 * max(len(types), 2)))
        if not types:
            _no_data(ax, _no_problems_note(elements, len(corpus.frame)))
        else:
            y = list(range(len(types)))[::-1]
            ax.barh(y, [rec[k] for k in types], color=[TIER_COLOURS[T.tier(k)] for k in types],
                    edgecolor="black", linewidth=0.4, label="recorded")
            ax.barh(y, [sug[k] for k in types], left=[rec[k] for k in types], color="white",
                    edgecolor=[TIER_COLOURS[T.tier(k)] for k in types], hatch="///", linewidth=0.8,
                    label="suggested by the linter only")
            for yi, k in zip(y, types):
                ax.text(rec[k] + sug[k], yi, f" {rec[k]}" + (f" (+{sug[k]})" if sug[k] else ""),
                        va="center", fontsize=8)
            ax.set_yticks(y, [f"{T.TYPES[k].name} [{T.tier(k)}]" for k in types])
            from matplotlib.patches import Patch
            ax.legend(handles=[Patch(facecolor="#bbbbbb", edgecolor="black", label="recorded (colour = tier)"),
                               Patch(facecolor="white", edgecolor="#777777", hatch="///",
                                     label="suggested by the linter only")],
                      loc="lower right", fontsize=8, frameon=False)
            ax.set_xlim(0, max(rec[k] + sug[k] for k in types) * 1.2 + 1)
            ax.set_xlabel("number of MCQs")
        ax.set_title(title)
        names.append(_save(fig, out / fname))
    return names


def _pairs(tags, elements: set[str], skip_notes: bool = False):
    """(item_id, type) of the tags on `elements`, each pair once."""
    if not len(tags):
        return tags[["item_id", "type"]] if "type" in tags else tags
    sel = tags[tags["element"].isin(elements) & tags["type"].isin(T.TYPES.keys())]
    if skip_notes:
        sel = sel[sel["type"] != T.NOTE]
    return sel[["item_id", "type"]].drop_duplicates()


def _no_problems_note(elements: set[str], n: int) -> str:
    undetectable = not any(t.detectable and set(t.elements) & elements for t in T.TYPES.values())
    return (f"No data: none of the {n} MCQs has a problem of this kind recorded"
            + (",\nand the surface linter has no rule for these types: an inconsistency\n"
               "between text, question and alternatives needs a reader to see it." if undetectable
               else "\nor suggested by the linter."))


def _no_data(ax, note: str) -> None:
    """An empty figure says so in words instead of drawing an empty axis."""
    ax.set_axis_off()
    ax.text(0.5, 0.5, note, ha="center", va="center", transform=ax.transAxes, fontsize=10,
            bbox={"boxstyle": "round", "facecolor": "#f5f5f0", "edgecolor": "#999999"})


def total_histogram(totals, stats: dict, out: Path) -> str:
    """Fig. 8: total difficulty, bins [k, k+1), theoretical min/max (red) and max without TOC (blue)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    lo, hi = int(D.THEORETICAL_MIN), int(D.THEORETICAL_MAX) + 1
    ax.hist(totals, bins=list(range(lo, hi + 1)), color="#377eb8", edgecolor="white")
    if not totals:
        ax.set_ylim(0, 1)
    for x in (D.THEORETICAL_MIN, D.THEORETICAL_MAX):
        ax.axvline(x, color="red", linestyle="--", linewidth=1.4)
    ax.axvline(D.THEORETICAL_MAX_WITHOUT_TOC, color="blue", linestyle="--", linewidth=1.4)
    ymax = ax.get_ylim()[1]
    ax.text(D.THEORETICAL_MIN + 0.2, ymax * 0.95, f"min {D.THEORETICAL_MIN:g}", color="red", fontsize=9, va="top")
    ax.text(D.THEORETICAL_MAX - 0.2, ymax * 0.95, f"max {D.THEORETICAL_MAX:g}", color="red", fontsize=9,
            va="top", ha="right")
    ax.text(D.THEORETICAL_MAX_WITHOUT_TOC - 0.2, ymax * 0.85, f"max without TOC {D.THEORETICAL_MAX_WITHOUT_TOC:g}",
            color="blue", fontsize=9, va="top", ha="right")
    ax.set_xlabel("total difficulty (Appendix A points)")
    ax.set_ylabel("number of MCQs")
    if stats["n"]:
        ax.set_title(f"Fig. 8 — total difficulty (n={stats['n']}; mean {stats['mean']:.2f}, "
                     f"median {stats['median']:g}, mode {mode_text(stats)})")
    else:
        ax.set_title("Fig. 8 — total difficulty: no eligible assessed MCQs")
    return _save(fig, out / "fig08_total_difficulty.png")


def _stacked(ax, df, column: str, order: list[str], labels: list[str], rotation: int = 60):
    bottom = [0] * len(order)
    for acc in T.ACCEPTABILITY:
        vals = [int(((df[column] == k) & (df.acceptability == acc)).sum()) for k in order]
        ax.bar(range(len(order)), vals, bottom=bottom, color=ACC_COLOURS[acc], edgecolor="black",
               linewidth=0.3, label=acc)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylim(0, max(bottom + [1]) * 1.18)
    for i, b in enumerate(bottom):
        ax.text(i, b, str(b), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(order)), labels, rotation=rotation, ha="right" if rotation else "center")
    ax.set_ylabel("number of MCQs")
    ax.legend(fontsize=8, frameon=False)


def toi_distribution(df, out: Path) -> str:
    """Fig. 9: TOI concepts, lowest-scoring first, red lines where the score rises by 1."""
    plt = _plt()
    order = D.categories("toi")
    fig, ax = plt.subplots(figsize=(12, 5))
    _stacked(ax, df, "toi_category", order, order)
    pts = [D.points("toi", k) for k in order]
    for i in range(1, len(order)):
        if pts[i] != pts[i - 1]:
            ax.axvline(i - 0.5, color="red", linestyle="--", linewidth=1)
    top = ax.get_ylim()[1]
    for p in sorted(set(pts)):
        idx = [i for i, q in enumerate(pts) if q == p]
        ax.text(sum(idx) / len(idx), top * 0.97, f"{p:g} pt", ha="center", va="top", color="red", fontsize=9)
    ax.set_title(f"Fig. 9 — type of information (TOI) of the evaluated MCQs (n={len(df)})")
    return _save(fig, out / "fig09_toi.png")


def tom_distribution(df, out: Path) -> str:
    plt = _plt()
    order = D.categories("tom")
    short = {"lm_lm": "LM+LM", "lm_sm": "LM+SM", "sm_sm": "SM+SM", "lm_llti": "LM+LLTI", "sm_llti": "SM+LLTI",
             "llti_llti": "LLTI+LLTI", "hlti": "HLTI+any", "gen": "GEN"}
    fig, ax = plt.subplots(figsize=(8, 4.6))
    _stacked(ax, df, "tom_category", order, [f"{short[k]}\n{D.points('tom', k):g} pt" for k in order], rotation=0)
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    fig.text(0.01, 0.01, "T-Q and T-A relations: LM literal, SM synonymous match, LLTI/HLTI low/high-level "
             "text-based inference, GEN interpretive framework", fontsize=7)
    ax.set_title(f"Fig. 10 — type of match (TOM), lowest score left (n={len(df)})")
    return _save(fig, out / "fig10_tom.png")


def pod_distribution(df, out: Path) -> str:
    plt = _plt()
    order = D.categories("pod")
    short = {"none": "no distracting information", "literal": "literal, other paragraph",
             "synonymous": "synonymous, other paragraph", "inference": "invited inference",
             "one_same_paragraph": "one in the key's paragraph", "two_same_paragraph": "2+ in the key's paragraph",
             "outside_text": "inference outside the text"}
    fig, ax = plt.subplots(figsize=(8, 5.2))
    _stacked(ax, df, "pod_category", order, [f"{short[k]} ({D.points('pod', k):g})" for k in order], rotation=30)
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    ax.set_title(f"Fig. 11 — plausibility of distractors (POD), lowest score left (n={len(df)})")
    return _save(fig, out / "fig11_pod.png")


def bases_heatmaps(corpus, item_ids: set[str], out: Path) -> str:
    """Fig. 12: where the bases lie, in 1% character buckets of the text, per alternative
    (the MCQs of `item_ids`)."""
    import numpy as np
    plt = _plt()
    n_alt = 4
    grids = np.zeros((n_alt, 101), dtype=np.int64)
    b = corpus.tables.bases
    if len(b) and item_ids:
        b = b[b["item_id"].isin(item_ids)].dropna(subset=["alternative"])
        b = b[(b["alternative"] >= 0) & (b["alternative"] < n_alt) & (b["end"] > b["start"])]
        pid = b["item_id"].map(dict(zip(corpus.tables.items["item_id"], corpus.tables.items["passage_id"])))
        n = pid.map(lambda p: len(corpus.tables.texts.get(p, ""))).to_numpy()
        keep = n > 0
        start, end = b["start"].to_numpy()[keep], b["end"].to_numpy()[keep]
        alt, n = b["alternative"].to_numpy().astype(int)[keep], n[keep]
        first = start * 100 // n
        last = np.minimum((end - 1) * 100 // n, 99)
        ok = first <= last
        # each span covers buckets first..last: +1 at first, -1 after last, then a running sum
        np.add.at(grids, (alt[ok], first[ok]), 1)
        np.add.at(grids, (alt[ok], last[ok] + 1), -1)
    grids = np.cumsum(grids, axis=1)[:, :100]
    vmax = int(grids.max()) or 1
    fig, axes = plt.subplots(1, n_alt, figsize=(13, 3.6))
    for i, ax in enumerate(axes):
        m = grids[i].reshape(10, 10)
        im = ax.imshow(m, cmap="viridis", vmin=0, vmax=vmax)
        ax.set_xticks(range(10), [str(c) for c in range(10)], fontsize=8)
        ax.set_yticks(range(10), [str(10 * r) for r in range(10)], fontsize=8)
        ax.set_title(f"alternative {'ABCD'[i]}")
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="bases covering the bucket")
    fig.suptitle(f"Fig. 12 — position of the bases in the text, 1% character buckets (row + column = %; "
                 f"n={len(item_ids)} MCQs)", y=0.93)
    with atomic.replacing(out / "fig12_bases_positions.png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "fig12_bases_positions.png"
