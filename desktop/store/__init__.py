"""The annotation store: the only code that speaks SQL.

    from desktop.store import Store, open_database
    store = open_database("annotations.db", "write", annotator="anna")  # or Store.open(...)
    store.import_datasets(datasets, file="embrace_green.jsonl")
    hid = store.apply(Change("0_0", "comment", "stem is ambiguous"))
    store.undo(); store.redo(); store.history("0_0")

See docs/CONTRACTS.md ("Store") for the whole interface.
"""
from .conflicts import StaleEditError
from .door import open_database
from .rows import HistoryRow, ImportResult, ItemRow
from .schema import SCHEMA_VERSION
from .store import Store, default_annotator

__all__ = ["Store", "open_database", "ItemRow", "HistoryRow", "ImportResult", "SCHEMA_VERSION",
           "StaleEditError", "default_annotator"]
