"""The figures of docs/models.md: accuracy by the shortcut model's N (Fig. 4) and by MI (Fig. 5)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from models.report.data import GROUPS

MIN_BIN = 10  # accuracy of a bin with fewer questions is noise: not drawn


def figure4(items: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharex=True)
    edges = np.arange(1.0, 4.0001, 0.2)
    centres = edges[:-1] + 0.1
    for col, (group, title) in enumerate(GROUPS):
        it = items[group]
        four = it["k"] == 4  # N is bounded by the number of alternatives: the 4-option items
        for key, ok, label, colour in (("n_std", "ok_std", "standard C+Q+{O}", "tab:blue"),
                                       ("n_sc", "ok_sc", "shortcut Q+{O}", "tab:orange")):
            n = it[key][four]
            correct = it[ok][four]
            idx = np.clip(np.digitize(n, edges) - 1, 0, len(centres) - 1)  # N = 4 exactly joins the last bin
            counts = np.bincount(idx, minlength=len(centres))
            acc = np.array([correct[idx == b].mean() * 100 if counts[b] >= MIN_BIN else np.nan
                            for b in range(len(centres))])
            off = -0.05 if key == "n_std" else 0.05
            axes[0, col].bar(centres + off, counts, width=0.1, color=colour, label=label)
            axes[1, col].plot(centres, acc, "o-", color=colour, label=label)
        axes[0, col].set_title(f"{title} ({int(four.sum())} four-option items)", fontsize=10)
        axes[0, col].set_ylabel("questions")
        axes[1, col].set_ylabel(f"accuracy (%), bins with ≥ {MIN_BIN} items")
        axes[1, col].set_xlabel("effective number of options N = 2^H (bins of 0.2)")
        axes[1, col].axhline(25, color="grey", lw=0.8, ls=":")
        axes[1, col].set_ylim(0, 100)
        axes[0, col].legend(fontsize=8)
    fig.suptitle("Figure 4 analogue: effective number of options and binned accuracy (calibrated)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def mi_groups(it: dict, n_groups: int = 10):
    """Items sorted by MI in equal-count groups: (mean MI, standard accuracy, shortcut accuracy) each."""
    mi = it["mi"]
    groups = np.array_split(np.argsort(mi, kind="stable"), n_groups)
    return mi, [(mi[g].mean(), it["ok_std"][g].mean() * 100, it["ok_sc"][g].mean() * 100) for g in groups]


def figure5(items: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mi, groups = mi_groups(items["race-test"])
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    a1.hist(mi, bins=np.arange(np.floor(mi.min() * 10) / 10, mi.max() + 0.05, 0.05), color="tab:green")
    a1.axvline(0, color="grey", lw=0.8)
    a1.set_ylabel("questions (bins of 0.05 bits)")
    a1.set_title(f"Figure 5 analogue: {len(mi)} RACE test questions by\n"
                 "MI = H(shortcut) − H(standard); accuracy per tenth of the questions sorted by MI", fontsize=10)
    x = [g[0] for g in groups]
    a2.plot(x, [g[1] for g in groups], "o-", label="standard C+Q+{O}")
    a2.plot(x, [g[2] for g in groups], "s-", label="shortcut Q+{O}")
    a2.axhline(25, color="grey", lw=0.8, ls=":")
    a2.set_ylabel("accuracy (%) of the tenth")
    a2.set_xlabel("MI (bits); points at the mean MI of each tenth")
    a2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
