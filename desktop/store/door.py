"""The one door to a database file: `open_database(path, mode)`.

The window's first open, File → Open/New/Recent, every worker that opens its own
connection and the commands (through `Store.open`, the door's "write" and "read") come in
here, so they all recognise the file, refuse a foreign one, treat a network file system
the same way, and fall back to reading for the same reasons.

Modes:
- "write": for a task that must save (import, annotate, merge, scoring): any refusal is raised.
- "read": for a task that only reads (reports, exports, a screenshot): never created,
  migrated or written; an older schema is read through an upgraded copy in memory.
- "write-or-read": the window.  Where the file cannot be written — `ReadOnly` (a read-only
  file, folder or mount), `DiskFull`, `NetworkFilesystem` (not insisted on) — an existing
  file is opened for reading instead, and `store.read_only_reason` says why in words.
  The choice is made by the error's type, never by its message.
"""
from __future__ import annotations

import os

from desktop.domain.errors import DiskFull, NetworkFilesystem, ReadOnly

from .store import Store

MODES = ("write", "read", "write-or-read")
# the refusals after which the window reads instead of giving up
READABLE_INSTEAD = (ReadOnly, DiskFull, NetworkFilesystem)


def open_database(path: str | os.PathLike, mode: str = "write", annotator: str | None = None, *,
                  create: bool = True, allow_network: bool | None = None,
                  mount_table: str | None = None) -> Store:
    """The store on the database file at `path`, opened as `mode` says (see the module).

    `create`: a missing file is created for writing (False: StoreError "no database at ...").
    `allow_network`: write a database on a network file system anyway (None: the environment's
    MCQLENS_ALLOW_NETWORK_DB).  `mount_table`: the mount table's text to judge where the file
    lives (tests); None reads this system's (Linux; elsewhere nothing is judged)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "read":
        return Store.open(path, annotator, create=False, read_only=True, mount_table=mount_table)
    try:
        return Store.open(path, annotator, create=create, allow_network=allow_network, mount_table=mount_table)
    except READABLE_INSTEAD as refusal:
        if mode == "write" or not os.path.isfile(path):
            raise
        store = Store.open(path, annotator, create=False, read_only=True, mount_table=mount_table)
        store.read_only_reason = str(refusal)
        return store
