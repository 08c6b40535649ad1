"""The stored model predictions as a CSV table: `mcqlens export predictions` and File → Export….

One row per question, model and input format, with the columns
`item_id, model, format, probs, predicted, entropy_bits, n_eff, mi_bits, evidence`.
Everything comes from what `mcqlens score` (or the window) stored; a number the
stored row lacks (an older row without entropy) is recomputed from its
probabilities, and MI is left empty where the other format was never scored.
"""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path

COLUMNS = ("item_id", "model", "format", "probs", "predicted", "entropy_bits", "n_eff", "mi_bits", "evidence")


def _entropy_bits(probs: list[float]) -> float:
    return -sum(p * math.log2(p) for p in probs if p > 0)


def prediction_rows(store) -> list[dict]:
    """The rows of the table, in the store's item order, then model and format."""
    rows = []
    for item in store.items():
        for p in sorted(store.predictions(item.item_id), key=lambda p: (p.model_id, p.input_format)):
            probs = [float(x) for x in p.probabilities]
            if not probs:
                continue
            h = p.extra.get("entropy_bits")
            h = _entropy_bits(probs) if h is None else float(h)
            n = p.extra.get("n_eff")
            predicted = p.extra.get("predicted")
            mi = p.extra.get("mi_bits")
            rows.append({
                "item_id": item.item_id, "model": p.model_id, "format": p.input_format,
                "probs": " ".join(f"{x:.6f}" for x in probs),
                "predicted": int(predicted) if predicted is not None else max(range(len(probs)), key=probs.__getitem__),
                "entropy_bits": h, "n_eff": float(n) if n is not None else 2.0 ** h,
                "mi_bits": "" if mi is None else float(mi), "evidence": p.evidence or "",
            })
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
