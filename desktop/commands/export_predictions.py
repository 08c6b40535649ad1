"""The stored model predictions as a CSV table: `mcqlens export predictions` and File → Export….

One row per question, model and input format, with the columns
`item_id, model, format, probs, predicted, entropy_bits, n_eff, mi_bits, evidence`.
Everything comes from what `mcqlens score` (or the window) stored, through
`inference.prediction_table.rows_for` (N, H and MI recomputed from the stored
probabilities; MI empty where the other format was never scored).
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

COLUMNS = ("item_id", "model", "format", "probs", "predicted", "entropy_bits", "n_eff", "mi_bits", "evidence")


def prediction_rows(store) -> list[dict]:
    """The rows of the table, in the store's item order: `inference.prediction_table.rows_for`
    (N, H and MI recomputed from the stored probabilities) plus the model's stored evidence."""
    from inference.prediction_table import rows_for

    rows = []
    for item in store.items():
        preds = store.predictions(item.item_id)
        evidence = {(p.model_id, p.input_format): p.evidence or "" for p in preds}
        for row in rows_for(item.item_id, preds):
            row["evidence"] = evidence.get((row["model"], row["format"]), "")
            rows.append(row)
    return rows


def export_predictions(store, out_path, force: bool = False) -> int:
    """Write the table to `out_path` (through a temporary file renamed into place); returns the rows written."""
    from desktop.domain.errors import McqLensError

    out = Path(out_path)
    if (out.exists() or out.is_symlink()) and not force:
        raise McqLensError(f"{out} exists; add --force to overwrite it")
    if not out.parent.exists():
        raise McqLensError(f"cannot write {out}: folder {out.parent} does not exist")
    rows = prediction_rows(store)
    if not rows:
        raise McqLensError(f"no model predictions in {store.path}; score the items first (mcqlens score)")
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    return len(rows)
