"""Merging another annotator's work in (`mcqlens merge`, File → Merge a colleague's work…).

Every annotation belongs to one annotator; a *layer* is what one annotator said about
one field of one item (the evidence spans, the bases of alternative k, the required
paragraphs, the problem tags, one difficulty variable, text format, unit type, ...).

* A layer this store lacks is added (items this store lacks are imported whole).
* The same layer with the same value: nothing happens, so merging twice changes nothing.
* Different annotators' values are not conflicts: they are layers side by side.
* The same annotator with a different value is a conflict: nothing is overwritten; the
  incoming version is kept as the layer of ``<annotator>@<label>`` (label: the other
  file's name, or ``--label``) and listed, until someone adjudicates (annotator ``gold``).

Everything goes through the store's public API (`import_datasets`, `apply`, `batch`),
so each added layer has its history row and can be undone; the whole merge is one
transaction.

Comments, answerability labels and free-text notes are layers per annotator too (read
per annotator from the other store; a file's belong to its "imported" annotator).  An export file
carries no annotator names except ExpMRC's reference positions (`expmrc-ref-N`): use
`--annotator NAME` to attribute its "imported" layers to a colleague.
"""
from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

# re-exported: the merge's callers find the layer rules and adjudication here
from desktop.app.merge_plan import Conflict, Incoming, MergePlan, plan_merge, plan_question  # noqa: F401
from desktop.domain.adjudication import SCALAR_FIELDS, adjudication_changes, disagreements, layers  # noqa: F401
from desktop.domain.changes import Change
from desktop.domain.errors import StoreError
from desktop.domain.model import DEFAULT_ANNOTATOR, Dataset
from desktop.domain.words import count
from desktop.formats import atomic, door
from desktop.store import Store, adjudication, own_files
from desktop.store.adjudication import annotator_fields


def _rename(datasets: list[Dataset], new_name: str) -> None:
    """Attribute the layers a file calls "imported" to `new_name` (a colleague's export)."""
    for ds in datasets:
        for q in ds.questions():
            for obj in (*q.spans, *q.problems, *q.assessments):
                if obj.annotator == DEFAULT_ANNOTATOR:
                    obj.annotator = new_name


def _rename_incoming(incoming: dict, new_name: str) -> None:
    """The same for the file's comments and answerability labels (see `read_other`)."""
    for per_item in (getattr(incoming, "comments", {}), getattr(incoming, "answerability", {})):
        for by_annotator in per_item.values():
            if DEFAULT_ANNOTATOR in by_annotator:
                by_annotator[new_name] = by_annotator.pop(DEFAULT_ANNOTATOR)


def _subset(datasets: list[Dataset], ids: set[str], incoming: dict | None = None) -> list[Dataset]:
    """The datasets' questions in `ids`.  From another store, a question's comments and
    label are everyone's together: keep only the "imported" annotator's for the import
    (the others come as edits, see `merge`)."""
    from_store = getattr(incoming, "from_store", False)
    out = []
    for ds in datasets:
        passages = []
        for p in ds.passages:
            qs = [q for q in p.questions if q.id in ids]
            if from_store:
                qs = [replace(q, comments=list(incoming.comments.get(q.id, {}).get(DEFAULT_ANNOTATOR, [])),
                              answerability=incoming.answerability.get(q.id, {}).get(DEFAULT_ANNOTATOR))
                      for q in qs]
            if qs:
                passages.append(type(p)(**{**p.__dict__, "questions": qs}))
        if passages:
            out.append(Dataset(source=ds.source, passages=passages, extra=ds.extra))
    return out


def merge(store, datasets: list[Dataset], label: str,
          notes: dict[str, dict[str, str]] | None = None) -> MergePlan:
    """Merge incoming datasets into the store; returns what was done (see the module docstring)."""
    plan = plan_merge(store, datasets, label, notes)
    notes = {} if notes is None else notes  # an empty Incoming still carries comments
    # one user action: all of it or nothing, and one commit instead of one synchronous
    # commit per layer (thousands for a whole file); each apply keeps its history row
    with store.batch():
        if plan.new_items:
            # Layers keep their own annotators ("imported" stays "imported").  No file is
            # given, so the other file's hash is not recorded and a later plain import works.
            store.import_datasets(_subset(datasets, set(plan.new_items), notes), annotator=DEFAULT_ANNOTATOR)
            for item in plan.new_items:  # notes are not part of a dataset: they come as edits
                for annotator, text in sorted(notes.get(item, {}).items()):
                    plan.changes.append(Change(item, "note", text, annotator))
                if getattr(notes, "from_store", False):  # so are other annotators' comments and labels
                    for annotator, texts in sorted(notes.comments.get(item, {}).items()):
                        if annotator != DEFAULT_ANNOTATOR and texts:
                            plan.changes.append(Change(item, "comments", list(texts), annotator))
                    for annotator, value in sorted(notes.answerability.get(item, {}).items()):
                        if annotator != DEFAULT_ANNOTATOR and value is not None:
                            plan.changes.append(Change(item, "answerability", value, annotator))
        for change in plan.changes:
            store.apply(change)
    return plan


def read_other(path: str, progress=None) -> tuple[list[Dataset], Incoming]:
    """Another store (*.db, *.sqlite) or an export file any reader understands; with the
    free-text notes, comments and answerability labels per item and annotator (a file's
    comments and labels are its "imported" annotator's; files carry no notes)."""
    if Path(path).suffix.lower() not in (".db", ".sqlite", ".sqlite3"):
        datasets = door.read(path, progress=progress)  # the door `import` reads through: the same errors
        incoming = Incoming()
        for ds in datasets:
            for q in ds.questions():
                if q.comments:
                    incoming.comments[q.id] = {DEFAULT_ANNOTATOR: list(q.comments)}
                if q.answerability is not None:
                    incoming.answerability[q.id] = {DEFAULT_ANNOTATOR: q.answerability}
        return datasets, incoming
    # read-only: the colleague's file is never created, migrated or switched to WAL
    other = Store.open(path, read_only=True)
    try:
        datasets = other.load_datasets()
        incoming = Incoming(from_store=True)
        for ds in datasets:
            for q in ds.questions():
                found = annotator_fields(other, q.id)
                if found.notes:
                    incoming[q.id] = found.notes
                if found.comments:
                    incoming.comments[q.id] = found.comments
                if found.answerability:
                    incoming.answerability[q.id] = found.answerability
        return datasets, incoming
    finally:
        other.close()


# ---------------------------------------------------------------------- adjudication
# The logic lives in desktop.domain.adjudication (pure) and desktop.store.adjudication
# (through the Store API); these names stay here for the merge's callers.


def adjudicate(store, item: str, fld: str, chosen_value: Any) -> list[int]:
    """Store `chosen_value` as the `gold` layer of `fld` on `item`; returns the history ids."""
    return adjudication.adjudicate(store, item, fld, chosen_value)


def adopt(store, item: str, fld: str, annotator: str) -> list[int]:
    """Adjudicate by choosing one annotator's version of `fld` (notes, comments and
    answerability included) as gold."""
    return adjudication.adopt(store, item, fld, annotator)


def read_incoming(other: str, annotator: str | None = None, progress=None) -> tuple[list[Dataset], Incoming]:
    """OTHER's datasets and per-annotator fields; `annotator` names a file's "imported" layers;
    `progress`: see `formats.read` (a file only)."""
    door.input_file(other, folders=True)  # a pipe or device would block the merge forever
    datasets, notes = read_other(other, progress)
    if annotator:
        _rename(datasets, annotator)
        _rename_incoming(notes, annotator)
    return datasets, notes


def merge_incoming(store, datasets: list[Dataset], notes: Incoming, label: str, dry_run: bool = False) -> MergePlan:
    return plan_merge(store, datasets, label, notes) if dry_run else merge(store, datasets, label, notes)


def merge_file(store, other: str, annotator: str | None = None, label: str | None = None,
               dry_run: bool = False) -> MergePlan:
    """Merge OTHER (another store or an export file) into `store`; with `dry_run`, only plan it.

    What `mcqlens merge` and the window's File → Merge a colleague's work… do: the
    conflicts are kept as `<annotator>@<label>` layers (label: OTHER's file name)."""
    if store.path != ":memory:" and Path(other).resolve() == Path(store.path).resolve():
        raise StoreError(f"{other}: cannot merge a store into itself")
    # the window holds a connection: its own -wal or -shm, read as a file, would cost it its locks
    store.refuse_own_file(other, "merged")
    datasets, notes = read_incoming(other, annotator)
    return merge_incoming(store, datasets, notes, label or Path(other).stem, dry_run)


def summary(plan: MergePlan, dry_run: bool = False) -> str:
    verb = "would add" if dry_run else "added"
    return (f"{verb} {count(len(plan.new_items), 'item')} and {count(len(plan.changes), 'annotation')}; "
            f"{count(plan.unchanged_layers, 'layer')} already present; {count(len(plan.conflicts), 'conflict')} "
            "kept side by side")




def check_not_itself(other: str, db: str) -> None:
    """A store is never merged into itself, nor its own -wal/-shm read as a file (its locks)."""
    if Path(other).resolve() == Path(db).resolve():
        raise StoreError(f"{other}: cannot merge a store into itself")
    own_files.refuse(other, db, "merged")


def merge_into(db: str, datasets: list[Dataset], notes: Incoming, label: str, dry_run: bool = False) -> MergePlan:
    """Merge what `read_incoming` read into the database at `db` (opened for reading with `dry_run`:
    a dry run writes nothing, anywhere)."""
    store = Store.open(db, read_only=dry_run)
    try:
        return merge_incoming(store, datasets, notes, label, dry_run)
    finally:
        store.close()


def write_conflicts(path: str, plan: MergePlan) -> None:
    """The plan's conflicts as JSON (written beside `path`, renamed into place)."""
    try:
        atomic.write_text(path, json.dumps([asdict(c) for c in plan.conflicts], indent=1))
    except OSError as exc:
        raise StoreError(f"the merge was saved, but the conflicts could not be written to {path}: "
                         f"{exc.strerror or exc}") from exc
