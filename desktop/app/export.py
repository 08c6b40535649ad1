"""Export: a store's items as EMBRACE, ExpMRC, RACE or a CSV table (`mcqlens export`, File → Export…).

The file is written beside the target and renamed into place (`desktop.formats.atomic`), so a
failed export never leaves half a file; an existing target is kept unless `force`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from desktop import formats
from desktop.app import paths
from desktop.app.export_kinds import KINDS, LAYERS, ON_TOP  # noqa: F401  (named here for the callers)
from desktop.domain import resolve
from desktop.domain.errors import McqLensError
from desktop.domain.model import LETTERS
from desktop.domain.words import count
from desktop.formats import atomic, expmrc


@dataclass
class ExportResult:
    out: Path
    kind: str
    questions: int
    files: int
    renamed: list = field(default_factory=list)  # (passage id, file name) where an id is no safe file name

    def summary(self) -> str:
        return f"{self.out}: {count(self.questions, 'question')} from {count(self.files, 'file')} as {self.kind}"


def export(store, kind: str, output, annotator: str | None = None, everyone: bool = False,
           source: str | None = None, file: str | None = None, force: bool = False,
           progress: Callable[[str], None] | None = None) -> ExportResult:
    """Write `store`'s items as `kind` to `output` (what `mcqlens export` and File → Export… do).

    Layers (`LAYERS`; resolved by `desktop.domain.resolve.item`, as the window shows an
    item): `annotator` NAME: the imported annotations with NAME's on top; `everyone`:
    every annotator's, later over earlier, `gold` not preferred; neither: everyone's with
    `gold` on top where it exists.  `source`: which stored source (default: embrace/expmrc
    their own; race, csv: every item); `file`: only items imported from that file.
    `progress(text)` says which step runs (reading the database, writing the file)."""
    if kind not in KINDS or kind == "predictions":
        raise McqLensError(f"unknown export kind {kind!r}; one of {', '.join(k for k in KINDS if k != 'predictions')}")
    out = Path(output)
    if not out.parent.is_dir():
        raise McqLensError(f"cannot write {out}: folder {out.parent} does not exist")
    paths.not_the_database(store, out)
    if kind == "race" and not out.suffix:  # a folder of .txt files, replaced whole
        paths.output_folder(out, force, export_suffix=".txt")
    else:  # force replaces a regular file, never a device, pipe, link or folder
        paths.output_file(out, force)
    # race and csv take every stored item (RACE is the common core of all sources); expmrc every
    # ExpMRC item and every other item with evidence (`formats.expmrc.records` chooses)
    source = source if source else (None if kind in ("csv", "race", "expmrc") else kind)
    if progress is not None:
        progress("reading the database")
    datasets = store.load_datasets(source=source, annotator=annotator, file=file)
    if progress is not None:
        progress(f"writing {out}")
    # Adjudicated work wins: the writers prefer the gold layer field by field.
    if everyone:
        preferred = None
    else:
        preferred = annotator or ("gold" if "gold" in store.annotators() else None)
    if not datasets:
        what = f"{source} items" if source else "items"
        raise McqLensError(f"no {what} in {store.path}" + (f" from {file}" if file else ""))
    written = None
    if kind == "expmrc":
        written = sum(len(r["questions"]) for r in expmrc.records(datasets))
        if not written:
            raise McqLensError(f"no expmrc items and no item with evidence in {store.path}"
                               + (f" from {file}" if file else "") + ": mark evidence (E) first")
    renamed = None
    try:
        # same suffix as OUT (the writers choose the layout by it): none for a RACE folder
        with atomic.replacing(out) as tmp:
            if kind == "csv":
                frame = table(datasets, store, preferred, time_of=annotator)
                frame.to_csv(tmp, index=False)
            else:
                renamed = _write(kind, datasets, tmp, preferred)
    except OSError as exc:
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    n = written if written is not None else sum(len(p.questions) for d in datasets for p in d.passages)
    return ExportResult(out, kind, n, len(datasets), renamed or [])


def _write(kind: str, datasets, path: Path, annotator: str | None):
    if kind == "embrace":
        return formats.write(kind, datasets, path, annotator=annotator)
    return formats.write(kind, datasets, path)


def table(datasets, store=None, annotator: str | None = None, time_of: str | None = None):
    """One row per question, annotations flattened (pandas DataFrame).

    The annotations are the item's layers resolved as the window shows them
    (`desktop.domain.resolve.item`, `annotator` on top): `difficulty.<var>` is each
    variable on top (a later annotator's over the imported), `difficulty_total` their
    Kirsch–Mosenthal total as the window computes it, `assessment_annotator` the
    annotators whose layers gave them, bottom to top.

    With a store: `status`, and `time_on_item_s` (seconds from the history's timestamps,
    `desktop.domain.time_on_item`'s rule): `time_of`'s own, or everyone's summed."""
    import pandas as pd  # heavy: only when a table is written

    rows = []
    n_alt = max((len(q.alternatives) for d in datasets for q in d.questions()), default=4)
    for d in datasets:
        for p in d.passages:
            for q in p.questions:
                row = {"item_id": q.id, "passage_id": p.id, "source": q.source, "index": q.index,
                       "split": p.split, "level": p.level, "stem": q.stem}
                for i in range(n_alt):
                    row[f"alternative_{LETTERS[i]}"] = q.alternatives[i] if i < len(q.alternatives) else None
                row["key"] = LETTERS[q.key] if q.key is not None else None
                row["n_alternatives"] = len(q.alternatives)
                shown = resolve.item(q, annotator)
                evidence = shown.evidence
                row["n_evidence"] = len(evidence)
                row["evidence"] = " || ".join(s.text(p.text) for s in evidence)
                row["evidence_annotators"] = ";".join(s.annotator for s in evidence)
                for i in range(n_alt):
                    b = shown.bases.get(i)
                    row[f"basis_{LETTERS[i]}"] = b.text(p.text) if b else None
                    row[f"basis_{LETTERS[i]}_start"] = b.start if b else None
                    row[f"basis_{LETTERS[i]}_end"] = b.end if b else None
                row["required_paragraphs"] = " || ".join(s.text(p.text) for s in shown.required_spans)
                row["assessment_annotator"] = ";".join(dict.fromkeys(shown.layers)) or None
                row["text_format"] = shown.text_format
                row["multiple_texts"] = shown.multiple_texts
                row["unit_type"] = shown.unit_type
                for var, value in shown.values.items():
                    row[f"difficulty.{var}"] = "/".join(map(str, value)) if isinstance(value, list) else value
                row["difficulty_total"] = shown.total
                row["n_problems"] = len(shown.problems)
                row["problems"] = ";".join(f"{t.type}@{t.element}" for t in shown.problems)
                row["comments"] = " | ".join(shown.comments)
                row["answerability"] = q.answerability
                for pr in q.predictions:
                    row[f"p.{pr.model_id}.{pr.input_format}"] = " ".join(f"{x:.4f}" for x in pr.probabilities)
                if store is not None:
                    row["status"] = None
                rows.append(row)
    frame = pd.DataFrame(rows)
    if store is not None and len(frame):
        # status is each annotator's own: the chosen annotator's, else the furthest anyone got
        status = ({r.item_id: r.status for r in store.items(annotator=annotator)} if annotator
                  else store.reads.furthest_status())
        frame["status"] = frame["item_id"].map(status)
        seconds: dict[str, float] = {}
        for t in store.time_on_item(annotator=time_of):
            seconds[t.item_id] = seconds.get(t.item_id, 0.0) + t.seconds
        frame["time_on_item_s"] = frame["item_id"].map(seconds).fillna(0.0)
    return frame
