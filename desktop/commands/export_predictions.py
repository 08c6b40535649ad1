"""`mcqlens export predictions --db DB -o OUT.csv`: the stored model predictions as a CSV table.

The work is `desktop.app.export_predictions.export_predictions` (File → Export… runs it too).
"""
from __future__ import annotations

from desktop.domain.words import count
from desktop.store import Store


def run(args) -> int:
    # inside: `inference` (numpy, tokenizers) stays out of the command line's start-up
    from desktop.app.export_predictions import export_predictions

    with Store.open(args.db, read_only=True) as store:
        n_rows, n_items = export_predictions(store, args.output, force=args.force, source=args.source)
    print(f"{args.output}: {count(n_rows, 'prediction')} of {count(n_items, 'question')}")
    return 0
