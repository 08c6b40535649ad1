"""The stored model predictions as a CSV table (`mcqlens export predictions`, File → Export…).

One row per question, model and input format, with the columns
`item_id, model, format, probs, predicted, entropy_bits, n_eff, mi_bits, evidence`
(`inference.prediction_table`, which recomputes H, N and MI from the stored probabilities;
MI empty where the other format was never scored).  Written beside OUT and renamed into
place, like every export (`desktop.formats.atomic`).
"""
from __future__ import annotations

import csv
from pathlib import Path

from desktop.app import paths
from desktop.domain.errors import McqLensError
from desktop.formats import atomic
from inference.prediction_table import COLUMNS, rows_for


def export_predictions(store, out_path, force: bool = False, source: str | None = None) -> tuple[int, int]:
    """Write the table to `out_path`; returns (rows written, questions with a row).
    The one function behind the command and the window's export dialog."""
    out = Path(out_path)
    if not out.parent.is_dir():
        raise McqLensError(f"cannot write {out}: folder {out.parent} does not exist")
    paths.output_file(out, force)  # --force replaces a regular file, never a device, pipe, link or folder
    paths.not_the_database(store, out)
    n_rows, items = 0, set()
    try:
        with atomic.replacing(out) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            for row in store.items(source=source):
                for r in rows_for(row.item_id, store.predictions(row.item_id)):
                    w.writerow(r)
                    n_rows += 1
                    items.add(row.item_id)
            if not n_rows:
                raise McqLensError(f"no stored predictions in {store.path}; "
                                   f"run `mcqlens score --db {store.path}` first")
    except OSError as exc:
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    return n_rows, len(items)
