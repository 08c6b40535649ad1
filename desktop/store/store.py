"""`Store`: the annotation database (SQLite through sqlite-utils) as the rest of the product sees it.

`Store` opens and closes the database (here) and is made of parts, each an object in a
module named after what it does, sharing the store's one connection: `reads` (reading.py:
datasets, questions, items, status), `corpus` (corpus_reads.py: the report tables, stats),
`edits` (edits.py: apply), `undoing` (undo.py: undo, redo), `audit` (history.py: the audit
trail, which the writing parts add to through `audit.record`), `model_outputs`
(model_outputs.py: predictions, give-away words), `importer` (importing.py: import_datasets,
import_files).  Their public methods are the store's own (`store.undo()` is
`store.undoing.undo()`, see `parts.forward`), except what one or two callers need (the
corpus tables of the reports, the scoring plan of Score all, an annotator's own view): those are
asked of the part (`store.corpus.bulk_items(source)`, `store.model_outputs.scoring_plan(...)`),
which keeps the store's own surface under 40 methods.
"""
from __future__ import annotations

import contextlib
import getpass
import os

from . import opening, own_files
from .connection import Connection, close_quietly
from .corpus_reads import CorpusReads
from .edits import Edits
from .history import History
from .importing import Importer
from .model_outputs import ModelOutputs
from .parts import forward
from .reading import Reads
from .undo import Undo


def default_annotator() -> str:
    """The operating-system user name, so edits are attributed without asking."""
    try:
        return os.environ.get("MCQLENS_ANNOTATOR") or getpass.getuser() or "annotator"
    except Exception:  # getuser fails without a login name (containers)
        return "annotator"


class Store:
    """All reads and writes of annotations.db.

    Every write is one transaction; every edit (`apply`) writes its history row in
    that same transaction.  Safe to share between the GUI thread and one worker
    (calls are serialised by a lock).
    """

    # the parts' methods, called on the store as before (callers say `store.undo()`)
    import_datasets = forward(Importer, "import_datasets", "importer")
    import_files = forward(Importer, "import_files", "importer")

    load_datasets = forward(Reads, "load_datasets", "reads")
    question = forward(Reads, "question", "reads")
    questions = forward(Reads, "questions", "reads")
    passage = forward(Reads, "passage", "reads")
    items = forward(Reads, "items", "reads")
    search = forward(Reads, "search", "reads")
    status = forward(Reads, "status", "reads")
    statuses = forward(Reads, "statuses", "reads")
    navigation = forward(Reads, "navigation", "reads")
    note = forward(Reads, "note", "reads")
    annotators = forward(Reads, "annotators", "reads")

    time_on_item = forward(CorpusReads, "time_on_item", "corpus")
    stats = forward(CorpusReads, "stats", "corpus")

    apply = forward(Edits, "apply", "edits")

    undo = forward(Undo, "undo", "undoing")
    redo = forward(Undo, "redo", "undoing")
    can_undo = forward(Undo, "can_undo", "undoing")
    can_redo = forward(Undo, "can_redo", "undoing")

    history = forward(History, "history", "audit")
    row_version = forward(History, "row_version", "audit")
    last_history_id = forward(History, "last_history_id", "audit")

    add_predictions = forward(ModelOutputs, "add_predictions", "model_outputs")
    predictions = forward(ModelOutputs, "predictions", "model_outputs")
    explanation = forward(ModelOutputs, "explanation", "model_outputs")

    def __init__(self, connection: Connection, annotator: str | None = None):
        self._c = connection
        try:
            self.migrated_from = self._c.migrate()
        except BaseException:
            close_quietly(connection.conn)
            raise
        self.annotator = annotator or default_annotator()
        who = self._who
        self.audit = History(connection)
        self.reads = Reads(connection, who)
        self.corpus = CorpusReads(connection, self.reads)
        self.edits = Edits(connection, self.audit, who)
        self.undoing = Undo(connection, self.audit, who)
        self.model_outputs = ModelOutputs(connection, self.audit, who)
        self.importer = Importer(connection, self.audit)
        # why nothing can be saved, in words (None: writable); the door says more when it chose reading
        self.read_only_reason: str | None = "opened for reading" if connection.read_only else None

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike, annotator: str | None = None, create: bool = True,
             read_only: bool = False, allow_network: bool | None = None,
             mount_table: str | None = None) -> "Store":
        """Open (creating on first use unless `create=False`) the database at `path`;
        upgrades an older schema after writing `<path>.bak-v<N>` next to it.

        `read_only=True` (every command that only reads): the file is opened with SQLite's
        `mode=ro` and never created, migrated or switched to WAL; an older schema is read
        through an upgraded copy in memory.  A file that is not an MCQ Lens database is
        refused (`NotOurs`) before anything is written to it, in either mode; one on a network
        file system is not written (`NetworkFilesystem`) unless `allow_network` (None: the
        environment's `MCQLENS_ALLOW_NETWORK_DB`).  This is `desktop.store.door.open_database`
        in its modes "write" and "read"; the window opens through the door."""
        path = os.fspath(path)
        if not path:
            return cls.memory(annotator)
        return cls(opening.open_file(path, read_only=read_only, create=create,
                                     allow_network=allow_network, mount_table=mount_table), annotator)

    @classmethod
    def memory(cls, annotator: str | None = None) -> "Store":
        """A private in-memory database (tests, previews)."""
        return cls(Connection.memory(), annotator)

    def _who(self) -> str:
        """The annotator of the moment (callers may set `store.annotator`): the parts ask here."""
        return self.annotator

    @contextlib.contextmanager
    def batch(self):
        """Several writes as one transaction (a merge, a batch edit): all of them or none.

        Each `apply` inside still writes its own history row; `import_datasets` and
        `apply` nest as savepoints."""
        with self._c.transaction():
            yield self

    @property
    def path(self) -> str:
        return self._c.path

    @property
    def read_only(self) -> bool:
        """Opened for reading only: every write raises StoreError("read-only: ...")."""
        return self._c.read_only

    @property
    def upgraded_in_memory(self) -> bool:
        """An older schema opened read-only: what is read comes from an upgraded copy in memory."""
        return self._c.in_memory_copy

    def close(self) -> None:
        self._c.close()

    def refuse_own_file(self, path: str | os.PathLike, verb: str = "imported") -> None:
        """InputError if reading `path` would open this store's database or its -wal/-shm/-journal
        outside SQLite (a file picked to import or merge); compared by inode, nothing is read."""
        own_files.refuse(path, None if self.path == ":memory:" else self.path, verb)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def db(self):
        """The sqlite-utils Database on the same connection (read-only use by reports)."""
        import sqlite_utils
        return sqlite_utils.Database(self._c.conn)
