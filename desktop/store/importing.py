"""The Store's import methods: a run of one or more files in ONE transaction.

`import_files` walks the files (a folder's datasets each name their own), skips what is
already imported (sha256), stores each dataset `IMPORT_PART` questions at a time and
writes one history row per file.  What one dataset's rows are — checked, planned and
written — is `imports.py`.  A part of `Store` (`store.importer`).
"""
from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterable, Iterator

from desktop.domain.model import DEFAULT_ANNOTATOR, Dataset, Passage

from . import imports, lint_ahead, lint_facts
from .connection import Connection
from .history import History
from .rows import ImportResult


class Importer:
    """`import_datasets` and `import_files`; each file's history row goes through `audit.record`."""

    def __init__(self, connection: Connection, audit: History):
        self._c, self._audit = connection, audit

    def import_datasets(self, datasets: Iterable[Dataset], annotator: str = DEFAULT_ANNOTATOR,
                        file: str | os.PathLike | None = None) -> ImportResult:
        """Store datasets read from `file` in one transaction.

        Idempotent: the same file (same sha256) again adds nothing; questions already
        stored with identical content are skipped; the same id with other content is an
        InputError (file, record, field) and nothing is written.  A dataset of source
        "expmrc-pred" (`extra["predictions"]` = {item id: Prediction}) stores model output.
        """
        return self.import_files([(file, datasets)], annotator)[0]

    def import_files(self, files: Iterable[tuple[str | os.PathLike | None, Iterable[Dataset]]],
                     annotator: str = DEFAULT_ANNOTATOR, progress=None) -> list[ImportResult]:
        """Several (file, datasets) pairs in ONE transaction: one bad file and nothing is stored.

        A folder's datasets each name their own file (`extra["file"]`) and the sha256 of
        the bytes read (`extra["sha256"]`): each is recorded, and skipped when re-imported,
        on its own; the result (and the history row) is one per pair.

        Passages are checked and written `IMPORT_PART` questions at a time, so a dataset whose
        passages are a `formats.Reread` (a file too large to hold) is stored as it is read
        again; `progress(questions)` is called after each part with the questions done so far."""
        results = []
        cache: dict = {}
        tally = _Tally(progress)
        ahead = lint_ahead.LintAhead()  # a second process for the lint of a large dataset
        with collector_paused(), ahead, self._c.transaction() as conn:
            for file, datasets in files:
                datasets = list(datasets)
                name = str(file) if file is not None else None
                total = ImportResult(file=name)
                units = _units(file, datasets, self._c.path)
                for unit_file, unit_sha, unit in units:
                    r = self._import_one(conn, unit, annotator, unit_file, unit_sha, cache, tally, ahead)
                    total.add(r)
                total.already_imported = all(r_ for r_ in total._already) and bool(units)
                total.sha256 = units[0][1] if len(units) == 1 else None
                if total.changed:
                    total.history_id = self._audit.record(
                        conn, annotator, None, "import", None,
                        {"file": name, "sha256": total.sha256, "files": len(units), "passages": total.passages,
                         "questions": total.questions, "spans": total.spans, "predictions": total.predictions},
                        kind="import")
                results.append(total)
        return results

    def _import_one(self, conn, datasets: list[Dataset], annotator: str, file, sha: str | None,
                    cache: dict, tally: "_Tally | None" = None, ahead: "lint_ahead.LintAhead | None" = None
                    ) -> ImportResult:
        name = str(file) if file is not None else None
        result = ImportResult(file=name, sha256=sha)
        if sha is not None and conn.execute("SELECT 1 FROM imports WHERE sha256=? LIMIT 1", (sha,)).fetchone():
            result.already_imported = True
            return result
        predictions = [d for d in datasets if d.source == "expmrc-pred"]
        datasets = [d for d in datasets if d.source != "expmrc-pred"]
        for dataset in datasets:
            rows = imports.DatasetRows(conn, dataset, annotator, name, sha, result)
            parts = _parts(dataset.passages, IMPORT_PART)
            linted = (ahead.parts(conn, parts) if ahead is not None and ahead.worth(dataset.passages)
                      else ((part, lint_facts) for part in parts))
            for part, lints in linted:
                part_set = Dataset(dataset.source, part, dataset.extra)
                plan, ((_, ds_passages, ds_questions),) = imports.plan_import(
                    conn, [part_set], annotator, name or "datasets", cache, positions=rows.positions, lints=lints)
                imports.write_passages(conn, plan, annotator, result)
                rows.add(ds_passages, ds_questions, {r[0] for r in plan.passages})
                imports.write_annotations(conn, plan, result)
                if tally is not None:
                    tally.add(sum(len(p.questions) for p in part))
            rows.finish()
        for d in predictions:
            result.predictions += imports.write_predictions(conn, d, name or "predictions")
        if result.changed and sha is not None and not result.datasets:
            # prediction files have no dataset row; remember them for idempotency
            conn.execute("INSERT INTO imports (file, sha256, dataset_id, annotator, ts) VALUES (?,?,?,?,?)",
                         (name, sha, None, annotator, imports.now()))
        return result


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector paused for an import (reference counting frees the rows
    as before).  An import makes and drops millions of objects that hold no cycles, and the
    collector walked every live one again and again: a quarter of the CPU of 500,000 generated
    RACE questions (10 of 32 s), for some 1,500 objects of cyclic garbage at the end."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Tally:
    """Questions an import has checked and written so far, told to `progress`."""

    def __init__(self, progress):
        self.progress, self.done = progress, 0

    def add(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done)


# Questions checked and written at a time: bounds what an import holds besides its reader
IMPORT_PART = 20_000


def _parts(passages: Iterable[Passage], questions: int) -> Iterator[list[Passage]]:
    """Passages in lists of about `questions` questions (a passage is never split)."""
    part: list[Passage] = []
    n = 0
    for p in passages:
        part.append(p)
        n += len(p.questions)
        if n >= questions:
            yield part
            part, n = [], 0
    if part:
        yield part


def _units(file, datasets: list[Dataset], database: str | None = None
           ) -> list[tuple[str | None, str | None, list[Dataset]]]:
    """(file, sha256, datasets) per file read: a folder's datasets each name their own file.

    Without a file (a merge from another database) nothing is fingerprinted, so a later
    plain import of that file still works."""
    if file is None:
        return [(None, None, datasets)]
    own = [d.extra.get("file") if isinstance(d.extra, dict) else None for d in datasets]
    if datasets and len(set(own)) == len(datasets) and all(own) and str(file) not in own:
        return [(f, d.extra.get("sha256"), [d]) for f, d in zip(own, datasets)]
    shas = {d.extra.get("sha256") for d in datasets if isinstance(d.extra, dict)}
    sha = shas.pop() if len(shas) == 1 and None not in shas else imports.file_sha256(file, database)
    return [(str(file) if file is not None else None, sha, datasets)]

