"""The annotation store: the only code that speaks SQL.

    from desktop.store import Store
    store = Store.open("annotations.db", annotator="anna")
    store.import_datasets(datasets, file="embrace_green.jsonl")
    hid = store.apply(Change("0_0", "comment", "stem is ambiguous"))
    store.undo(); store.redo(); store.history("0_0")

See docs/CONTRACTS.md ("Store") for the whole interface.
"""
from .conflicts import StaleEditError
from .rows import HistoryRow, ImportResult, ItemRow
from .schema import SCHEMA_VERSION
from .store import Store, default_annotator

__all__ = ["Store", "ItemRow", "HistoryRow", "ImportResult", "SCHEMA_VERSION", "StaleEditError",
           "default_annotator"]
