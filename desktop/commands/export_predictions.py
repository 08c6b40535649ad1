"""`mcqlens export predictions --db DB -o OUT.csv`: the stored model predictions as a table.

One row per question, model and input format; columns `item_id, model, format, probs,
predicted, entropy_bits, n_eff, mi_bits, evidence` (`inference.prediction_table`, which
recomputes H, N and MI from the stored probabilities).  Written to a temporary file
next to OUT and renamed into place, like every export.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path


def run(args) -> int:
    from desktop.domain.errors import McqLensError
    from desktop.store import Store
    from inference.prediction_table import COLUMNS, rows_for

    out = Path(args.output)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}{out.suffix}")
    n_rows, items = 0, set()
    with Store.open(args.db, create=False) as store:
        rows_in = store.items(source=args.source)
        try:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                w = csv.DictWriter(f, fieldnames=COLUMNS)
                w.writeheader()
                for row in rows_in:
                    for r in rows_for(row.item_id, store.predictions(row.item_id)):
                        w.writerow(r)
                        n_rows += 1
                        items.add(row.item_id)
            if not n_rows:
                raise McqLensError(f"no stored predictions in {args.db}; run `mcqlens score --db {args.db}` first")
            os.replace(tmp, out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    print(f"{out}: {n_rows} predictions of {len(items)} questions")
    return 0
