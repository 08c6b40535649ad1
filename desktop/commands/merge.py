"""`mcqlens merge OTHER.db|EXPORT.json --db DB`: bring another annotator's work in.

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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

# adjudication_changes and disagreements are re-exported: callers use them from here
from desktop.domain.adjudication import (  # noqa: F401
    SCALAR_FIELDS, adjudication_changes, disagreements, layers, span_field,
)
from desktop.domain.adjudication import jsonable as _jsonable
from desktop.domain.adjudication import span_value as _span_value
from desktop.domain.changes import Change
from desktop.domain.model import BASIS, DEFAULT_ANNOTATOR, Dataset, Question
from desktop.domain.words import count


@dataclass
class Conflict:
    """Same item, field and annotator, two values: `ours` stays, `theirs` is kept as `kept_as`."""

    item: str
    field: str
    annotator: str
    ours: Any
    theirs: Any
    kept_as: str


@dataclass
class MergePlan:
    new_items: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged_layers: int = 0
    skipped: list[dict] = field(default_factory=list)  # same id, different item: never merged


# --------------------------------------------------------------------------- layers


class Incoming(dict):
    """What the other side says per annotator beyond its datasets.

    As a dict it is {item: {annotator: note}} (the `notes` that `merge` always took);
    `comments` ({item: {annotator: [texts]}}) and `answerability` ({item: {annotator:
    label}}) ride along.  `from_store`: read from another store, whose loaded
    questions merge everyone's comments, so new items take them as edits instead.
    """

    def __init__(self, notes=None, comments=None, answerability=None, from_store: bool = False):
        super().__init__(notes or {})
        self.comments: dict[str, dict[str, list[str]]] = comments or {}
        self.answerability: dict[str, dict[str, str]] = answerability or {}
        self.from_store = from_store


def _spans_of(q: Question, annotator: str, fld: str) -> dict[tuple, Any]:
    out = {}
    for s in q.spans:
        if s.annotator == annotator and span_field(s.role, s.alternative) == fld:
            out[_span_value(s)] = s
    return out


def _layer_changes(theirs_q: Question, annotator: str, fld: str, value: Any, write_as: str) -> list[Change]:
    """The changes that create layer (annotator, fld) = value under the name `write_as`."""
    item = theirs_q.id
    if fld == "problems":
        out = []
        for t in theirs_q.problems:
            if t.annotator == annotator:
                v = {"type": t.type, "element": t.element, "note": t.note or "", "origin": t.origin}
                v.update({k: getattr(t, k) for k in ("alternative", "start", "end") if getattr(t, k) is not None})
                if t.extra:
                    v["extra"] = t.extra
                out.append(Change(item, "problem.add", v, write_as))
        return _dedupe(out)
    if fld in ("evidence", "required") or fld.startswith(f"{BASIS}."):
        spans = _spans_of(theirs_q, annotator, fld)
        out = []
        for start, end in value:
            s = spans[(start, end)]
            v = {"role": s.role, "start": start, "end": end, "origin": s.origin}
            if s.role == BASIS:
                v["alternative"] = s.alternative
            if s.extra:
                v["extra"] = s.extra
            out.append(Change(item, "span.add", v, write_as))
        return out
    if fld == "comments":
        return [Change(item, "comments", list(value), write_as)]
    if fld.startswith("difficulty."):
        return [Change(item, fld, list(value) if isinstance(value, tuple) else value, write_as)]
    return [Change(item, fld, value, write_as)]


def _dedupe(changes: list[Change]) -> list[Change]:
    seen, out = set(), []
    for c in changes:
        key = json.dumps(c.value, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _same_item(a: Question, b: Question) -> bool:
    return (a.passage_id, a.stem, list(a.alternatives), a.key) == (b.passage_id, b.stem, list(b.alternatives), b.key)


def plan_question(ours: Question, theirs: Question, label: str, our_notes: dict[str, str] | None = None,
                  their_notes: dict[str, str] | None = None, our_fields: dict[str, dict] | None = None,
                  their_fields: dict[str, dict] | None = None) -> tuple[list[Change], list[Conflict], int]:
    """Changes that bring `theirs`' layers into `ours`, the conflicts, and how many layers were already there.

    `*_notes` are {annotator: note}; `*_fields` are {"comments": {annotator: [texts]},
    "answerability": {annotator: label}}, as each side keeps them per annotator."""
    mine = layers(ours, our_notes, **(our_fields or {}))
    incoming = layers(theirs, their_notes, **(their_fields or {}))
    changes: list[Change] = []
    conflicts: list[Conflict] = []
    unchanged = 0
    for (annotator, fld), value in sorted(incoming.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        current = mine.get((annotator, fld))
        if current == value:
            unchanged += 1
            continue
        if current is None:
            changes += _layer_changes(theirs, annotator, fld, value, annotator)
            continue
        # Same annotator, other value: keep ours, keep theirs beside it under an alias
        # (the first alias that is free or already holds exactly this value).
        n, alias = 1, f"{annotator}@{label}"
        while mine.get((alias, fld)) not in (None, value):
            n += 1
            alias = f"{annotator}@{label}#{n}"
        conflicts.append(Conflict(ours.id, fld, annotator, _jsonable(current), _jsonable(value), alias))
        if mine.get((alias, fld)) is None:
            changes += _layer_changes(theirs, annotator, fld, value, alias)
        else:
            unchanged += 1
    return changes, conflicts, unchanged


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


def plan_merge(store, datasets: list[Dataset], label: str,
               notes: dict[str, dict[str, str]] | None = None) -> MergePlan:
    """Compare incoming datasets with the store; writes nothing.

    `notes` are {item: {annotator: text}}; an `Incoming` (what `read_other` gives)
    also brings the comments and answerability labels per item and annotator."""
    plan = MergePlan()
    notes = {} if notes is None else notes  # an empty Incoming still carries comments
    comments = getattr(notes, "comments", {})
    labels = getattr(notes, "answerability", {})
    known = {row.item_id for row in store.items()}
    for ds in datasets:
        for p in ds.passages:
            for q in p.questions:
                if q.id not in known:
                    plan.new_items.append(q.id)
                    continue
                ours = store.question(q.id)
                if not _same_item(ours, q):
                    plan.skipped.append({"item": q.id, "reason": "stored with another passage, stem, "
                                                               "alternatives or key"})
                    continue
                theirs_notes, their_comments, their_labels = notes.get(q.id), comments.get(q.id), labels.get(q.id)
                our_notes = our_fields = their_fields = None
                if theirs_notes or their_comments or their_labels:
                    from desktop.store.adjudication import annotator_fields

                    mine = annotator_fields(store, q.id)
                    our_notes = mine.notes
                    our_fields = {"comments": mine.comments, "answerability": mine.answerability}
                    their_fields = {"comments": their_comments or {}, "answerability": their_labels or {}}
                changes, conflicts, unchanged = plan_question(ours, q, label, our_notes, theirs_notes,
                                                              our_fields, their_fields)
                plan.changes += changes
                plan.conflicts += conflicts
                plan.unchanged_layers += unchanged
    return plan


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
    from desktop.formats import door
    from desktop.store import Store
    from desktop.store.adjudication import annotator_fields

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
# (through the Store API); these names stay here for the command's callers.


def adjudicate(store, item: str, fld: str, chosen_value: Any) -> list[int]:
    """Store `chosen_value` as the `gold` layer of `fld` on `item`; returns the history ids."""
    from desktop.store import adjudication

    return adjudication.adjudicate(store, item, fld, chosen_value)


def adopt(store, item: str, fld: str, annotator: str) -> list[int]:
    """Adjudicate by choosing one annotator's version of `fld` (notes, comments and
    answerability included) as gold."""
    from desktop.store import adjudication

    return adjudication.adopt(store, item, fld, annotator)


# ----------------------------------------------------------------------------- CLI


def register(sub) -> None:
    p = sub.add_parser(
        "merge",
        help="bring another annotator's work in (another store or an export file); conflicts are listed",
        description="Merge OTHER (another annotations.db, or an EMBRACE/ExpMRC/RACE export) into --db. "
        "Idempotent; nothing is overwritten: the same annotator with a different value is a conflict, "
        "kept as the layer <annotator>@<label> and listed.",
    )
    p.add_argument("other", metavar="OTHER.db|EXPORT.json")
    p.add_argument("--db", default="annotations.db", help="the store to merge into (default: annotations.db)")
    p.add_argument("--annotator", default=None,
                   help='attribute what the file calls "imported" to this annotator (for a colleague\'s export)')
    p.add_argument("--label", default=None, help="suffix for conflicting versions (default: OTHER's file name)")
    p.add_argument("--conflicts", default=None, metavar="FILE.json", help="also write the conflicts here")
    p.add_argument("--dry-run", action="store_true", help="report what would happen; write nothing")
    p.set_defaults(func=run)


def read_incoming(other: str, annotator: str | None = None, progress=None) -> tuple[list[Dataset], Incoming]:
    """OTHER's datasets and per-annotator fields; `annotator` names a file's "imported" layers;
    `progress`: see `formats.read` (a file only)."""
    from desktop.formats import door

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
    from desktop.domain.errors import StoreError

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


def run(args) -> int:
    from desktop.domain.errors import StoreError
    from desktop.store import Store

    from desktop.commands import paths
    from desktop.formats import door

    door.input_file(args.other, folders=True)  # a pipe or device would block the merge forever
    if Path(args.other).resolve() == Path(args.db).resolve():
        raise StoreError(f"{args.other}: cannot merge a store into itself")
    from desktop.store import own_files

    own_files.refuse(args.other, args.db, "merged")
    if args.conflicts:  # checked before the merge is committed, not after
        paths.output_file(args.conflicts)
    from desktop.commands.progress import Progress, reading

    with Progress(100, "%", label="reading") as step:  # a line every few seconds when stderr is no terminal
        # a bad file: the store is not even opened
        datasets, notes = read_incoming(args.other, args.annotator, reading(step, Path(args.other).name))
    store = Store.open(args.db, read_only=args.dry_run)  # --dry-run writes nothing, anywhere
    try:
        plan = merge_incoming(store, datasets, notes, args.label or Path(args.other).stem, args.dry_run)
    finally:
        store.close()
    print(summary(plan, args.dry_run))
    for c in plan.conflicts:
        print(f"conflict: item {c.item}, {c.field}, annotator {c.annotator}: ours {json.dumps(c.ours)} / "
              f"theirs {json.dumps(c.theirs)} kept as {c.kept_as}")
    for s in plan.skipped:
        print(f"skipped: item {s['item']}: {s['reason']}")
    if args.conflicts:
        try:
            Path(args.conflicts).write_text(json.dumps([asdict(c) for c in plan.conflicts], indent=1),
                                            encoding="utf-8")
        except OSError as exc:
            raise StoreError(f"the merge was saved, but the conflicts could not be written to {args.conflicts}: "
                             f"{exc.strerror or exc}") from exc
    return 0
