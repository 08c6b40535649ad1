"""The stored model predictions as a CSV table: `mcqlens export predictions` and File → Export….

One row per question, model and input format, with the columns
`item_id, model, format, probs, predicted, entropy_bits, n_eff, mi_bits, evidence`
(`inference.prediction_table`, which recomputes H, N and MI from the stored probabilities;
MI empty where the other format was never scored).  Written to a temporary file next to
OUT and renamed into place, like every export.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

from inference.prediction_table import COLUMNS

from desktop.domain.words import count


def export_predictions(store, out_path, force: bool = False, source: str | None = None) -> tuple[int, int]:
    """Write the table to `out_path`; returns (rows written, questions with a row).
    The one function behind the command and the window's export dialog."""
    from desktop.commands import paths
    from desktop.domain.errors import McqLensError
    from inference.prediction_table import rows_for

    out = Path(out_path)
    if not out.parent.is_dir():
        raise McqLensError(f"cannot write {out}: folder {out.parent} does not exist")
    paths.output_file(out, force)  # --force replaces a regular file, never a device, pipe, link or folder
    from desktop.commands.export import not_the_database

    not_the_database(store, Path(out))
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}{out.suffix}")
    n_rows, items = 0, set()
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            for row in store.items(source=source):
                for r in rows_for(row.item_id, store.predictions(row.item_id)):
                    w.writerow(r)
                    n_rows += 1
                    items.add(row.item_id)
        if not n_rows:
            raise McqLensError(f"no stored predictions in {store.path}; run `mcqlens score --db {store.path}` first")
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n_rows, len(items)


def run(args) -> int:
    from desktop.store import Store

    with Store.open(args.db, read_only=True) as store:
        n_rows, n_items = export_predictions(store, args.output, force=args.force, source=args.source)
    print(f"{args.output}: {count(n_rows, 'prediction')} of {count(n_items, 'question')}")
    return 0
