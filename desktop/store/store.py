"""`Store`: the annotation database (SQLite through sqlite-utils) as the rest of the product sees it.

`Store` opens and closes the database (here); its other methods come from modules named
after what they do: `importing` (import_datasets, import_files), `reading` (datasets,
questions, items, status), `corpus_reads` (the report tables, stats), `edits` (apply,
batch), `undo` (undo, redo), `history` (the audit trail), `model_outputs` (predictions,
give-away words).
"""
from __future__ import annotations

import getpass
import os

from . import opening, own_files
from .connection import Connection, close_quietly
from .corpus_reads import CorpusReadMethods
from .edits import EditMethods
from .history import HistoryMethods
from .importing import ImportMethods
from .model_outputs import ModelOutputMethods
from .reading import ReadMethods
from .undo import UndoMethods


def default_annotator() -> str:
    """The operating-system user name, so edits are attributed without asking."""
    try:
        return os.environ.get("MCQLENS_ANNOTATOR") or getpass.getuser() or "annotator"
    except Exception:  # getuser fails without a login name (containers)
        return "annotator"


class Store(ImportMethods, ReadMethods, CorpusReadMethods, EditMethods, UndoMethods, HistoryMethods,
            ModelOutputMethods):
    """All reads and writes of annotations.db.

    Every write is one transaction; every edit (`apply`) writes its history row in
    that same transaction.  Safe to share between the GUI thread and one worker
    (calls are serialised by a lock).
    """

    def __init__(self, connection: Connection, annotator: str | None = None):
        self._c = connection
        try:
            self.migrated_from = self._c.migrate()
        except BaseException:
            close_quietly(connection.conn)
            raise
        self.annotator = annotator or default_annotator()
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
