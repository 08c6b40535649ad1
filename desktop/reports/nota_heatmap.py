"""Heatmaps and the CSV of the NOTA grid: rows are test sets by C, columns are models.

As in the seed (section 4): the highest C at the top, column averages in a row above
the table and row averages in a column at its right; the accuracy family in seaborn's
'mako', the answerability family in 'rocket', always on a fixed 0–1 scale so a value
has the same colour in every map; undefined cells (zero division) light grey and
empty, never 0.
"""
from __future__ import annotations

import csv
import textwrap
from pathlib import Path
from typing import Sequence

from desktop.domain import nota
from desktop.formats import atomic

CMAPS = {nota.ACCURACY: "mako", nota.ANSWERABILITY: "rocket"}
UNDEFINED_GREY = "#d9d9d9"
AVG = "avg"


def matrix(cells: Sequence[dict], metric: str):
    """DataFrame of one metric: index C (descending) plus 'avg' on top, columns models plus 'avg'."""
    import pandas as pd

    models = list(dict.fromkeys(c["model"] for c in cells))
    cs = sorted({c["c"] for c in cells}, reverse=True)
    table = pd.DataFrame(index=cs, columns=models, dtype=float)
    for cell in cells:
        v = cell.get(metric)
        table.loc[cell["c"], cell["model"]] = float("nan") if v is None else v
    # averages over defined cells only: an undefined cell is not a zero
    col_avg = table.mean(axis=0, skipna=True)
    row_avg = table.mean(axis=1, skipna=True)
    overall = nota.mean_defined(None if pd.isna(v) else float(v) for v in table.to_numpy().ravel())
    table[AVG] = row_avg
    top = pd.DataFrame([list(col_avg) + [float("nan") if overall is None else overall]],
                       index=[AVG], columns=table.columns)
    out = pd.concat([top, table])
    out.index = [AVG] + [f"{c:.0%}" for c in cs]
    return out


GRID_FIELDS = ["c", "model", "replicas", *nota.METRIC_NAMES]
REPLICA_FIELDS = ["c", "model", "format", "replica", "n", "unanswerable", "true_nota", "missed_nota",
                  "false_nota", "correct", "wrong", *nota.METRIC_NAMES]


def write_csv(cells: Sequence[dict], path: str | Path, fields: Sequence[str] = GRID_FIELDS) -> Path:
    """Long table: one row per (C, model[, replica]), metric columns; undefined is an empty field."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replacing(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(fields), extrasaction="ignore")
        w.writeheader()
        for cell in sorted(cells, key=lambda c: (c["c"], c["model"], c.get("replica", 0))):
            w.writerow({k: ("" if cell.get(k) is None else cell.get(k)) for k in fields})
    return path


def plot(cells: Sequence[dict], metric: str, path: str | Path, title: str | None = None) -> Path:
    """One heatmap PNG for one metric."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import seaborn as sns

    label, family = next((lab, fam) for name, lab, fam in nota.METRICS if name == metric)
    table = matrix(cells, metric)
    # Model names are card names ("MCQ Lens default: MiniLM-L6 …"): wrap them so that no
    # column label is cut off, and size the figure for the longest one.
    labels = ["\n".join(textwrap.wrap(str(c), 18, max_lines=3, placeholder="…")) or str(c) for c in table.columns]
    table = table.set_axis(labels, axis=1)
    n_rows, n_cols = table.shape
    label_lines = max((lab.count("\n") + 1 for lab in labels), default=1)
    fig, ax = plt.subplots(figsize=(max(5.5, 2.6 + 1.3 * n_cols), 1.6 + 0.42 * n_rows + 0.2 * label_lines))
    ax.set_facecolor(UNDEFINED_GREY)  # masked (NaN) cells let the background show: grey = undefined
    sns.heatmap(table.astype(float), ax=ax, cmap=CMAPS[family], vmin=0.0, vmax=1.0,
                annot=True, fmt=".2f", annot_kws={"size": 8}, mask=table.isna(),
                linewidths=0.0, cbar_kws={"shrink": 0.8})
    # set the averages off from the table, as the seed does
    ax.axhline(1, color="white", lw=4)
    ax.axvline(n_cols - 1, color="white", lw=4)
    ax.set_ylabel("Test set (proportion of unanswerable questions)")
    ax.set_xlabel("Model")
    ax.set_title(title or label)
    plt.setp(ax.get_xticklabels(), rotation=0, ha="center", fontsize=8)
    plt.setp(ax.get_yticklabels(), rotation=0)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replacing(path) as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def plot_all(cells: Sequence[dict], folder: str | Path) -> list[Path]:
    return [plot(cells, name, Path(folder) / f"heatmap_{name}.png") for name in nota.METRIC_NAMES]
