"""The corpus report: items.csv, the EMBRACE figures, index.html and the give-away page
(`mcqlens report`, Reports → Report…)."""
from __future__ import annotations

from typing import Callable

from desktop.domain.errors import StoreError
# light at load: these modules import pandas and matplotlib only when a report is written
from desktop.reports.corpus_items import tables_from_store
from desktop.reports.corpus_report import write_report
from desktop.store import open_database


def corpus_report(store, out: str, source: str | None = None, annotator: str | None = None) -> dict:
    """Write the corpus report of `store` into folder `out`; returns write_report's summary
    (what `mcqlens report` and the window's Reports → Report… do)."""
    tables = tables_from_store(store, source=source, annotator=annotator)
    if not len(tables.items):
        raise StoreError(f"{store.path}: no questions to report on")
    try:
        return write_report(tables, out)
    except OSError as exc:
        raise StoreError(f"{out}: cannot write the report ({exc.strerror or exc})") from exc


def report_database(db_path: str, out: str, progress: Callable[[str], None]) -> dict:
    """`corpus_report` through a connection of its own (a worker thread's, the window's Report…)."""
    progress(f"Writing the report into {out}…")
    with open_database(db_path, "read", create=False) as store:
        return corpus_report(store, out)
