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


def register(sub) -> None:
    p = sub.add_parser("export", help="write the annotations as EMBRACE, ExpMRC, RACE or a CSV table, "
                                      "or the stored model predictions",
                       description="Export stored items. Without edits, EMBRACE and ExpMRC exports reproduce "
                                   "the imported files.")
    p.add_argument("kind", choices=KINDS, help="output format")
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file (race: .json list, .jsonl, or a folder of .txt files)")
    layer = p.add_mutually_exclusive_group()
    layer.add_argument("--annotator", default=None,
                       help="export the imported annotations and NAME's (default: the adjudicated "
                            "'gold' layer where it exists, else everyone's)")
    layer.add_argument("--everyone", action="store_true",
                       help="every annotator's layers, without preferring the adjudicated 'gold' layer")
    p.add_argument("--source", default=None,
                   help="which stored source to export (default: embrace/expmrc their own; race, csv: all)")
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
    with _open(args.db) as store:
        result = export(store, args.kind, args.output, annotator=args.annotator, everyone=args.everyone,
                        source=args.source, file=args.file, force=args.force)
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
           source: str | None = None, file: str | None = None, force: bool = False) -> ExportResult:
    """Write `store`'s items as `kind` to `output` (what `mcqlens export` and File → Export… do).

    Layers: `annotator` NAME: the imported annotations and NAME's; `everyone`: every
    annotator's, the adjudicated `gold` layer not preferred; neither: `gold` where it
    exists, else everyone's.  `source`: which stored source (default: embrace/expmrc
    their own; race, csv: every item); `file`: only items imported from that file."""
    from desktop.commands import paths
    from desktop.domain.errors import McqLensError

    if kind not in KINDS or kind == "predictions":
        raise McqLensError(f"unknown export kind {kind!r}; one of {', '.join(k for k in KINDS if k != 'predictions')}")
    out = Path(output)
    if not out.parent.is_dir():
        raise McqLensError(f"cannot write {out}: folder {out.parent} does not exist")
    if kind == "race" and not out.suffix:  # a folder of .txt files, replaced whole
        paths.output_folder(out, force, export_suffix=".txt")
    else:  # force replaces a regular file, never a device, pipe, link or folder
        paths.output_file(out, force)
    # race and csv take every stored item (RACE is the common core of all sources)
    source = source if source else (None if kind in ("csv", "race") else kind)
    datasets = store.load_datasets(source=source, annotator=annotator, file=file)
    # Adjudicated work wins: the writers prefer the gold layer field by field.
    if everyone:
        preferred = None
    else:
        preferred = annotator or ("gold" if "gold" in store.annotators() else None)
    if not datasets:
        what = f"{source} items" if source else "items"
        raise McqLensError(f"no {what} in {store.path}" + (f" from {file}" if file else ""))
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
    n = sum(len(p.questions) for d in datasets for p in d.passages)
    return ExportResult(out, kind, n, len(datasets), renamed or [])


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


def _pick(items, annotator: str | None):
    """The annotator's own, else the latest human one, else the imported one."""
    if not items:
        return None
    if annotator:
        own = [x for x in items if x.annotator == annotator]
        if own:
            return own[-1]
    return items[-1]


def table(datasets, store=None, annotator: str | None = None, time_of: str | None = None):
    """One row per question, annotations flattened (pandas DataFrame).

    With a store: `status`, and `time_on_item_s` (seconds from the history's timestamps,
    `desktop.domain.time_on_item`'s rule): `time_of`'s own, or everyone's summed."""
    import pandas as pd

    from desktop.domain.model import BASIS, EVIDENCE, LETTERS, REQUIRED

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
                evidence = q.spans_with(EVIDENCE)
                row["n_evidence"] = len(evidence)
                row["evidence"] = " || ".join(s.text(p.text) for s in evidence)
                row["evidence_annotators"] = ";".join(s.annotator for s in evidence)
                for i in range(n_alt):
                    bases = q.spans_with(BASIS, i)
                    b = _pick(bases, annotator)
                    row[f"basis_{LETTERS[i]}"] = b.text(p.text) if b else None
                    row[f"basis_{LETTERS[i]}_start"] = b.start if b else None
                    row[f"basis_{LETTERS[i]}_end"] = b.end if b else None
                req = q.spans_with(REQUIRED)
                row["required_paragraphs"] = " || ".join(s.text(p.text) for s in req)
                a = _pick(q.assessments, annotator)
                row["assessment_annotator"] = a.annotator if a else None
                row["text_format"] = a.text_format if a else None
                row["multiple_texts"] = a.multiple_texts if a else None
                row["unit_type"] = a.unit_type if a else None
                for var, value in (a.values.items() if a else []):
                    row[f"difficulty.{var}"] = "/".join(map(str, value)) if isinstance(value, list) else value
                row["n_problems"] = len(q.problems)
                row["problems"] = ";".join(f"{t.type}@{t.element}" for t in q.problems)
                row["comments"] = " | ".join(q.comments)
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
