"""The window's one door to the store and the file readers (no Qt here, no SQL).

Everything the widgets need is asked for through these small functions, so a
change of the store's interface touches this module only.  The work the window runs in
a worker thread is the application's (`desktop.app.facts`, `desktop.app.imports.read_file`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from desktop.domain import resolve
from desktop.domain.changes import Change
from desktop.domain.errors import StoreError
from desktop.domain.model import Assessment, Dataset, Question
from desktop.domain.words import count
from desktop.store import Store, open_database
from desktop.store.conflicts import NOT_GIVEN

# the navigator facts are the application's (desktop.app.facts)
from desktop.app.facts import question_facts, unannotated_facts


@dataclass
class ItemState:
    """Everything the window shows for one item, split into the annotator's own and the rest."""

    question: Question
    passage_text: str
    own: Assessment | None  # this annotator's assessment
    reference: Assessment | None  # another (usually the imported) assessment, shown until overridden
    note: str
    own_comments: list[str]
    other_comments: list[str]
    status: str
    values: dict[str, Any] = field(default_factory=dict)  # the layers resolved: own over the others
    inherited: set[str] = field(default_factory=set)  # variables shown from another annotator's layer
    shown: Any = None  # desktop.domain.resolve.Shown: the item as every export writes it
    version: int = 0  # the store's row_version when this was read: another window's edit raises it
    own_comments_stored: list[str] | None = None  # this annotator's comments exactly as stored
    own_answerability: str | None = None  # this annotator's own label (the shown one may be imported)
    time_on_item: float = 0.0  # this annotator's seconds on the item, from the history (domain.time_on_item)

    @property
    def text_format(self):
        return self._scalar("text_format")

    @property
    def unit_type(self):
        return self._scalar("unit_type")

    @property
    def multiple_texts(self):
        return self._scalar("multiple_texts")

    def _scalar(self, name: str):
        return getattr(self.shown, name, None)


class Backend:
    """The store as the window uses it; holds the annotator's name and a passage-text cache."""

    def __init__(self, store, read_only_reason: str | None = None, create_at: str | None = None,
                 allow_network: bool | None = None):
        self.store = store
        self._texts: dict[str, str] = {}
        # why the window only reads (None: it writes); every edit is then refused by the store
        self.read_only_reason = read_only_reason or getattr(store, "read_only_reason", None) \
            or ("opened for reading" if store.read_only else None)
        self._nav = None
        # a database not created yet: the window shows an empty one, and the file is made
        # when something is first stored (`create_now`), not when the window merely opens
        self.create_at = create_at
        # the user insisted on writing a database on a network file system (`mcqlens gui
        # --allow-network-db`): the databases opened from this window, and its workers, may too
        self.allow_network = allow_network

    @classmethod
    def open(cls, path: str, annotator: str | None = None, read_only: bool = False,
             create_later: bool = False, create: bool = True, allow_network: bool | None = None) -> "Backend":
        """The store for the window, through the one door (`desktop.store.door.open_database`,
        mode "write-or-read").  A database that cannot be written (read-only folder or
        mount, full disk, a network file system not insisted on) is opened for reading
        instead, with the reason in `read_only_reason`.  `read_only=True` (a screenshot)
        never writes, and a missing database is shown as an empty one in memory rather than
        created.  `create_later` (`mcqlens gui`): a missing database is created when the
        first items are stored in it, so a window opened only to open or create another one
        leaves no file behind.  `create=False` (File → Open): a missing file is an error."""
        if read_only:
            if not os.path.exists(path):
                return cls(Store.memory(annotator), "nothing is written")
            return cls(open_database(path, "read", annotator))
        if create_later and not os.path.lexists(path):
            return cls(Store.memory(annotator), create_at=os.path.abspath(path), allow_network=allow_network)
        return cls(open_database(path, "write-or-read", annotator, create=create, allow_network=allow_network),
                   allow_network=allow_network)

    def open_again(self, read: bool = False):
        """Another store on this window's database file, for a worker thread (a connection of
        its own), opened through the same door the same way: for reading when this window only
        reads or `read` (a task that only reads); never created."""
        mode = "read" if read or self.read_only else "write"
        return open_database(self.path, mode, self.annotator, create=False, allow_network=self.allow_network)

    @property
    def read_only(self) -> bool:
        return self.read_only_reason is not None

    @property
    def annotator(self) -> str:
        return self.store.annotator

    @property
    def path(self) -> str:
        return self.create_at or self.store.path

    def create_now(self) -> bool:
        """Create the database the window was opened on, if it is not there yet (before the
        first write); True when it was created now."""
        if self.create_at is None:
            return False
        store = open_database(self.create_at, "write", self.store.annotator, allow_network=self.allow_network)
        self.store.close()
        self.store, self.create_at, self._nav = store, None, None
        self._texts.clear()
        return True

    def close(self) -> None:
        self.store.close()

    # ---- reading ---------------------------------------------------------------------------
    def items(self) -> list:
        """Every item's row (whole-database work only: the navigator reads pages, see `navigation`)."""
        return self.store.items()

    def navigation(self):
        """The navigator's paged queries on this store (one per window: it holds the facts)."""
        if self._nav is None:
            self._nav = self.store.navigation(unannotated_facts())
        return self._nav

    def is_empty(self) -> bool:
        return self.navigation().is_empty()

    def item_row(self, item_id: str, passage_id: str | None = None):
        return self.navigation().row(self.annotator, item_id)

    def passage_text(self, passage_id: str) -> str:
        text = self._texts.get(passage_id)
        if text is None:
            text = self._texts[passage_id] = self.store.passage(passage_id).text
        return text

    def load(self, item_id: str, status: str | None = None) -> ItemState:
        me = self.annotator
        # The version is read first: an edit slipping in between costs one extra refresh, never a missed one.
        mine = self.store.reads.own_view(item_id, me)
        if mine.row_version is None:
            raise StoreError(f"unknown item {item_id!r}")
        q = self.store.question(item_id, annotator=me)
        own = next((a for a in q.assessments if a.annotator == me), None)
        reference = next((a for a in q.assessments if a.annotator != me), None)
        # the layers resolved by the one function every export uses: what is shown is what is written
        shown = resolve.item(q, me)
        # The store lists imported comments first; the annotator edits only their own.
        n_other = min(mine.imported_comments, len(q.comments))
        return ItemState(question=q, passage_text=self.passage_text(q.passage_id), own=own, reference=reference,
                         note=mine.note or "", own_comments=q.comments[n_other:], other_comments=q.comments[:n_other],
                         status=status if status is not None else mine.status, values=dict(shown.values),
                         inherited=shown.inherited(me), shown=shown, version=mine.row_version,
                         own_comments_stored=mine.comments, own_answerability=mine.answerability,
                         time_on_item=sum(t.seconds for t in self.store.time_on_item(annotator=me, item_id=item_id)))

    # ---- what a window showed, for stale-edit detection --------------------------------------
    def shown(self, state: ItemState, field_: str, value: Any = None) -> Any:
        """The stored state of `field_` as `state` (what the window shows) had it, in the shape
        `store.apply(..., expect=)` compares; NOT_GIVEN where nothing can go stale (adding a span)."""
        own = state.own
        if field_ in ("comment", "comments"):
            return list(state.own_comments_stored if state.own_comments_stored is not None else state.own_comments)
        if field_ == "answerability":
            return state.own_answerability
        if field_ == "status":
            return state.status
        if field_ == "note":
            return state.note or None
        if field_.startswith("difficulty."):
            return None if own is None else own.values.get(field_.split(".", 1)[1])
        if field_ in ("text_format", "unit_type", "multiple_texts"):
            return None if own is None else getattr(own, field_)
        if field_ in ("span.remove", "span.update", "problem.remove") and isinstance(value, dict):
            rows = state.question.spans if field_.startswith("span.") else state.question.problems
            shown = next((r for r in rows if r.id is not None and r.id == value.get("id")), None)
            if shown is None:
                return NOT_GIVEN
            if field_.startswith("span."):
                return {"start": shown.start, "end": shown.end, "role": shown.role}
            return {"type": shown.type, "element": shown.element}
        return NOT_GIVEN

    def version(self, item_id: str) -> int:
        return self.store.row_version(item_id)

    def last_change_id(self) -> int:
        """The newest history id: one indexed query, cheap enough for a timer."""
        return self.store.last_history_id()

    def changes_since(self, history_id: int) -> list:
        return self.store.history(since=history_id)

    def removed_by(self, item_id: str, field_: str, row_id: int):
        """The history row that took span/problem `row_id` away (a remove, or an undone add), if any."""
        kind = field_.split(".", 1)[0]
        for h in reversed(self.store.history(item_id=item_id)):
            if not h.field.startswith(kind + "."):
                continue
            gone = h.after is None and isinstance(h.before, dict) and h.before.get("id") == row_id
            if gone:
                return h
        return None

    def item_rows(self, item_ids: list[str], passages: dict[str, str] | None = None) -> dict[str, Any]:
        """Fresh navigator rows of `item_ids`, in one query."""
        return {r.item_id: r for r in self.store.items(item_ids=item_ids)}

    def all_facts(self, progress: Callable[..., None] | None = None, chunk: int = 400) -> dict[str, dict[str, Any]]:
        """The navigator's facts of every item that has annotations or predictions (the others
        have `unannotated_facts()`), read a chunk of questions at a time (for a worker thread)."""
        ids = self.navigation().annotated_items()
        out: dict[str, dict[str, Any]] = {}
        for k in range(0, len(ids), chunk):
            for q in self.store.questions(ids[k:k + chunk], annotator=self.annotator):
                out[q.id] = question_facts(q, self.annotator)
            if progress:
                progress(f"facts of {min(k + chunk, len(ids))} of {count(len(ids), 'item')}")
        return out

    # ---- writing ----------------------------------------------------------------------------------
    def apply(self, item_id: str, field_: str, value: Any, expect: Any = NOT_GIVEN) -> int:
        """Store one edit (one transaction with its history row); returns the history id.

        `expect` (from `shown`): refused with StaleEditError if the field no longer holds it;
        NOT_GIVEN: no check."""
        return self.store.apply(Change(item_id, field_, value, self.annotator), expect=expect)

    def undo(self):
        return self.store.undo(self.annotator)

    def redo(self):
        return self.store.redo(self.annotator)

    def refuse_own_file(self, path: str) -> None:
        """InputError if `path` is this window's database or one of its side files (reading it
        as a file would drop the window's locks on it); nothing is read."""
        self.store.refuse_own_file(path)

    def import_datasets(self, datasets: list[Dataset], file: str | None):
        """Store what a reader produced, predictions included, in ONE transaction: a bad
        record anywhere and nothing of the file is stored.  Returns the ImportResult."""
        self.create_now()
        return self.store.import_datasets(datasets, file=file)

    def load_all(self) -> list[Dataset]:
        return self.store.load_datasets(annotator=self.annotator)
