"""The corpus report's figures (EMBRACE Figs. 3–12) as PNG files; matplotlib imported inside."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from desktop.domain import difficulty as D
from desktop.domain import typology as T

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
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path.name


def acceptability_matrix(df, out: Path) -> str:
    """Fig. 3: MCQs per acceptability of the text (rows) and of the MCQ unit (columns)."""
    plt = _plt()
    order = list(T.ACCEPTABILITY)
    m = [[int(((df.text_acceptability == r) & (df.mcq_unit_acceptability == c)).sum()) for c in order]
         for r in order]
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
    ax.set_title(f"Fig. 3 — MCQs per problem category (n={len(df)})")
    for s in ax.spines.values():
        s.set_visible(False)
    fig.text(0.01, 0.01, "A acceptable, mA mainly, pA partially acceptable, uA unacceptable", fontsize=8)
    return _save(fig, out / "fig03_acceptability_matrix.png")


def problems_per_element(rows, out: Path) -> list[str]:
    """Figs. 4–7: MCQs with each problem type, per element; recorded tags and the linter's extra ones."""
    plt = _plt()
    groups = [("fig04_problems_text.png", "Fig. 4 — problems in texts", {"text"}),
              ("fig05_problems_stems.png", "Fig. 5 — problems in MCQ stems", {"question"}),
              ("fig06_problems_alternatives.png", "Fig. 6 — problems in MCQ alternatives",
               {"alternatives", "between-alternatives"}),
              ("fig07_problems_combinations.png", "Fig. 7 — problems between text and MCQ elements",
               {"question-text", "text-alternatives", "question-alternatives"})]
    names = []
    for fname, title, elements in groups:
        rec, sug = Counter(), Counter()
        for r in rows:
            got = {t.type for t in r.recorded if t.element in elements and t.type != T.NOTE}
            rec.update(got)
            sug.update({t.type for t in r.suggested if t.element in elements} - got)
        types = sorted(set(rec) | set(sug), key=lambda k: ("severe moderate mild".split().index(T.tier(k)),
                                                           -rec[k], k))
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.42 * max(len(types), 2)))
        if not types:
            ax.text(0.5, 0.5, "no problems recorded or suggested", ha="center", va="center", transform=ax.transAxes)
            ax.set_yticks([])
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
                     f"median {stats['median']:g}, mode {stats['mode']:g})")
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


def bases_heatmaps(rows, out: Path) -> str:
    """Fig. 12: where the bases lie, in 1% character buckets of the text, per alternative."""
    plt = _plt()
    n_alt = 4
    grids = [[0] * 100 for _ in range(n_alt)]
    for r in rows:
        n = len(r.passage_text)
        if not n:
            continue
        for s in r.question.spans:
            if s.role != "basis" or s.alternative is None or s.alternative >= n_alt or s.end <= s.start:
                continue
            first, last = s.start * 100 // n, (s.end - 1) * 100 // n
            for b in range(first, min(last, 99) + 1):
                grids[s.alternative][b] += 1
    vmax = max(max(g) for g in grids) or 1
    fig, axes = plt.subplots(1, n_alt, figsize=(13, 3.6))
    for i, ax in enumerate(axes):
        m = [grids[i][row * 10:(row + 1) * 10] for row in range(10)]
        im = ax.imshow(m, cmap="viridis", vmin=0, vmax=vmax)
        ax.set_xticks(range(10), [str(c) for c in range(10)], fontsize=8)
        ax.set_yticks(range(10), [str(10 * r) for r in range(10)], fontsize=8)
        ax.set_title(f"alternative {'ABCD'[i]}")
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="bases covering the bucket")
    fig.suptitle(f"Fig. 12 — position of the bases in the text, 1% character buckets (row + column = %; "
                 f"n={len(rows)} MCQs)", y=0.93)
    fig.savefig(out / "fig12_bases_positions.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "fig12_bases_positions.png"
