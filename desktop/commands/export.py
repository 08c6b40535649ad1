"""`mcqlens export embrace|expmrc|race|csv|predictions --db DB -o OUT [--annotator NAME|--everyone] [--force]`.

`predictions` writes the stored model predictions (`desktop.commands.export_predictions`).
`export` is the one function behind the command and the window's File → Export….

Writes go to a temporary file next to the target that is renamed into place, so a
failed export never leaves half a file; an existing target is kept unless --force.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from desktop.domain.words import count


KINDS = ("embrace", "expmrc", "race", "csv", "predictions")

# Which layer is written: said by `mcqlens export --help` and the window's export dialog alike.
LAYERS = ("Each item is written as the window shows it: the imported annotations at the bottom, each "
          "annotator who edited the item over them, one difficulty variable, text format, unit type, basis "
          "or required paragraphs at a time (a corrected NI keeps every other imported value); evidence, "
          "problem tags and comments of every layer. RACE files carry no annotations; predictions are the "
          "models', not an annotator's.")
ON_TOP = ("On top: the adjudicated 'gold' layer where it exists (default), no annotator preferred "
          "(--everyone), or NAME (--annotator NAME: the imported annotations and NAME's only, as NAME's "
          "window shows them).")


def register(sub) -> None:
    p = sub.add_parser("export", help="write the annotations as EMBRACE, ExpMRC, RACE or a CSV table, "
                                      "or the stored model predictions",
                       description="Export stored items. Without edits, EMBRACE and ExpMRC exports reproduce "
                                   "the imported files. " + LAYERS + " " + ON_TOP)
    p.add_argument("kind", choices=KINDS, help="output format")
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file (race: .json list, .jsonl, or a folder of .txt files)")
    layer = p.add_mutually_exclusive_group()
    layer.add_argument("--annotator", default=None,
                       help="NAME's layer on top of the imported annotations, as NAME's window shows them "
                            "(default: everyone's layers, the adjudicated 'gold' layer on top where it exists)")
    layer.add_argument("--everyone", action="store_true",
                       help="every annotator's layers, later over earlier, without putting 'gold' on top")
    p.add_argument("--source", default=None,
                   help="which stored source to export (default: embrace its own; expmrc: the ExpMRC items and "
                        "every other item with evidence; race, csv: all)")
    p.add_argument("--file", default=None, help="only items imported from this file (path or name)")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    p.set_defaults(func=run)


@dataclass
class ExportResult:
    out: Path
    kind: str
    questions: int
    files: int
    renamed: list = field(default_factory=list)  # (passage id, file name) where an id is no safe file name

    def summary(self) -> str:
        return f"{self.out}: {count(self.questions, 'question')} from {count(self.files, 'file')} as {self.kind}"


def run(args) -> int:
    if args.kind == "predictions":
        from desktop.commands import export_predictions

        return export_predictions.run(args)
    from desktop.commands.progress import Heartbeat

    # a line every few seconds while a large database is read and written (stderr, any stream)
    with _open(args.db) as store, Heartbeat("export") as beat:
        result = export(store, args.kind, args.output, annotator=args.annotator, everyone=args.everyone,
                        source=args.source, file=args.file, force=args.force, beat=beat)
    print(result.summary())
    if result.renamed:
        first = ", ".join(f"{i!r} -> {name}" for i, name in result.renamed[:3])
        print(f"note: {len(result.renamed)} passage id(s) are not safe or unique file names and were written under "
              f"other names ({first}{', ...' if len(result.renamed) > 3 else ''}); the ids stay in the records; "
              f"the list is in {result.out / 'ids.tsv'}")
    return 0


def _open(db: str):
    from desktop.store import Store

    return Store.open(db, read_only=True)  # an export never writes to the database


def export(store, kind: str, output, annotator: str | None = None, everyone: bool = False,
           source: str | None = None, file: str | None = None, force: bool = False, beat=None) -> ExportResult:
    """Write `store`'s items as `kind` to `output` (what `mcqlens export` and File → Export… do).

    Layers (`LAYERS`; resolved by `desktop.domain.resolve.item`, as the window shows an
    item): `annotator` NAME: the imported annotations with NAME's on top; `everyone`:
    every annotator's, later over earlier, `gold` not preferred; neither: everyone's with
    `gold` on top where it exists.  `source`: which stored source (default: embrace/expmrc
    their own; race, csv: every item); `file`: only items imported from that file."""
    from desktop.commands import paths
    from desktop.domain.errors import McqLensError

    if kind not in KINDS or kind == "predictions":
        raise McqLensError(f"unknown export kind {kind!r}; one of {', '.join(k for k in KINDS if k != 'predictions')}")
    out = Path(output)
    if not out.parent.is_dir():
        raise McqLensError(f"cannot write {out}: folder {out.parent} does not exist")
    not_the_database(store, out)
    if kind == "race" and not out.suffix:  # a folder of .txt files, replaced whole
        paths.output_folder(out, force, export_suffix=".txt")
    else:  # force replaces a regular file, never a device, pipe, link or folder
        paths.output_file(out, force)
    # race and csv take every stored item (RACE is the common core of all sources); expmrc every
    # ExpMRC item and every other item with evidence (`formats.expmrc.records` chooses)
    source = source if source else (None if kind in ("csv", "race", "expmrc") else kind)
    if beat is not None:
        beat.step("reading the database")
    datasets = store.load_datasets(source=source, annotator=annotator, file=file)
    if beat is not None:
        beat.step(f"writing {out}")
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
        from desktop.formats import expmrc

        written = sum(len(r["questions"]) for r in expmrc.records(datasets))
        if not written:
            raise McqLensError(f"no expmrc items and no item with evidence in {store.path}"
                               + (f" from {file}" if file else "") + ": mark evidence (E) first")
    # same suffix as OUT (the writers choose the layout by it): none for a RACE folder
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}{out.suffix}" if out.suffix
                        else f".{out.name}_tmp{os.getpid()}")
    renamed = None
    try:
        if kind == "csv":
            frame = table(datasets, store, preferred, time_of=annotator)
            frame.to_csv(tmp, index=False)
        else:
            renamed = _write(kind, datasets, tmp, preferred)
        _replace(tmp, out)
    except OSError as exc:
        _remove(tmp)
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    except BaseException:
        _remove(tmp)
        raise
    n = written if written is not None else sum(len(p.questions) for d in datasets for p in d.passages)
    return ExportResult(out, kind, n, len(datasets), renamed or [])


def not_the_database(store, out: Path) -> None:
    """An export never replaces the database it reads, nor its -wal/-shm (even with --force)."""
    from desktop.domain.errors import McqLensError
    from desktop.store import own_files

    if own_files.among(out, store.path) is not None and not out.is_dir():
        raise McqLensError(f"cannot write {out}: it is the database being exported (or one of its side files); "
                           "choose another file")


def _write(kind: str, datasets, path: Path, annotator: str | None):
    from desktop import formats

    if kind == "embrace":
        return formats.write(kind, datasets, path, annotator=annotator)
    return formats.write(kind, datasets, path)


def _replace(tmp: Path, out: Path) -> None:
    if tmp.is_dir():  # a RACE folder export: swap whole folders
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    else:
        os.replace(tmp, out)


def _remove(tmp: Path) -> None:
    if tmp.is_dir():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.unlink(missing_ok=True)
    part = tmp.with_name(tmp.name + ".part")
    part.unlink(missing_ok=True)


def table(datasets, store=None, annotator: str | None = None, time_of: str | None = None):
    """One row per question, annotations flattened (pandas DataFrame).

    The annotations are the item's layers resolved as the window shows them
    (`desktop.domain.resolve.item`, `annotator` on top): `difficulty.<var>` is each
    variable on top (a later annotator's over the imported), `difficulty_total` their
    Kirsch–Mosenthal total as the window computes it, `assessment_annotator` the
    annotators whose layers gave them, bottom to top.

    With a store: `status`, and `time_on_item_s` (seconds from the history's timestamps,
    `desktop.domain.time_on_item`'s rule): `time_of`'s own, or everyone's summed."""
    import pandas as pd

    from desktop.domain import resolve
    from desktop.domain.model import LETTERS

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
                  else store.furthest_status())
        frame["status"] = frame["item_id"].map(status)
        seconds: dict[str, float] = {}
        for t in store.time_on_item(annotator=time_of):
            seconds[t.item_id] = seconds.get(t.item_id, 0.0) + t.seconds
        frame["time_on_item_s"] = frame["item_id"].map(seconds).fillna(0.0)
    return frame
