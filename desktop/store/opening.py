"""Opening a database file: recognising it, creating it, and connecting for reading or writing.

Opening never writes to a file MCQ Lens did not create: an existing file is first
opened read-only (`file:...?mode=ro`) and recognised (`recognise.identify`); only then,
and only when writing was asked for, is it opened for writing.  A new database is
built in a temporary file next to the target and hard-linked into place, so it
appears whole (schema, marker, WAL) or not at all, and processes creating the same
database at once all end up opening the one that won.

Only SQLite opens the database file and its -wal/-shm/-journal: a descriptor opened
and closed beside SQLite's would drop this process's locks on it (see `probe`).
Looking at the side files is done with `os.stat`, which opens nothing.

A file on a network file system is not opened for writing unless the caller insists
(`network_fs`; which callers may is decided in `door.py`).
"""
from __future__ import annotations

import errno
import os
import secrets
import sqlite3
import time
from pathlib import Path

from desktop.domain.errors import NetworkFilesystem, NewerSchema, NotOurs, StoreError

from . import network_fs, recognise, schema
from .connection import Connection, close_quietly, connect, translate, uri, why_not_writable


PROBE_RETRIES = (0.05, 0.2)  # seconds before reading a header again that read as not SQLite or malformed


def open_file(path: str, read_only: bool = False, create: bool = True, allow_network: bool | None = None,
              mount_table: str | None = None) -> Connection:
    """The `Connection` to the database file at `path`, recognised before anything is written.

    `read_only`: never created, migrated or switched to WAL.  For writing, a missing file is
    created (unless `create=False`: StoreError), and a file on a network file system is
    refused (`NetworkFilesystem`) unless `allow_network` (None: `network_fs.allowed()`, the
    environment's `MCQLENS_ALLOW_NETWORK_DB`).  `mount_table`: the text of
    /proc/self/mountinfo to judge by (tests); None reads this system's."""
    p = Path(path)
    check_file(p, create and not read_only)
    network = network_fs.where(path, mount_table)
    if network and not read_only and not network_fs.allowed(allow_network):
        raise NetworkFilesystem(network_fs.refusal(path, network))
    if not p.exists():
        create_database(p)
    # recognise it before anything could write to it; on a network file system a reader must not
    # checkpoint on close (another host's writer may hold the WAL: its lock is not seen here)
    conn, found = open_read_only(p, may_checkpoint=network is None)
    if found > schema.SCHEMA_VERSION:
        close_quietly(conn)
        raise NewerSchema(f"{path} was made by a newer MCQ Lens (schema {found}, "
                          f"this one knows up to {schema.SCHEMA_VERSION}); nothing was changed")
    if read_only:
        return Connection(conn, path, read_only=True, found_version=found)
    close_quietly(conn)
    conn = None
    try:
        conn = connect(path)
        conn.execute("PRAGMA foreign_keys = ON")
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"could not switch to WAL ({mode}): attempt to write a readonly "
                                               "database")
        # FULL: an acknowledged change survives a power cut too, not only a killed process
        conn.execute("PRAGMA synchronous = FULL")
    except (sqlite3.Error, OSError) as exc:
        close_quietly(conn)
        raise translate(exc, path) from exc
    return Connection(conn, path, found_version=found)


def check_file(p: Path, create: bool) -> None:
    if p.is_dir():
        raise StoreError(f"{p} is a folder, not a database file")
    if p.exists() and not p.is_file():
        raise StoreError(f"{p} is not a regular file (a device, pipe or socket is not a database)")
    if not p.exists():
        if not create:
            raise StoreError(f"no database at {p}; import files first: mcqlens import PATH --db {p}")
        if not p.parent.exists():
            raise StoreError(f"cannot create database {p}: folder {p.parent} does not exist")


def wal_has_content(p: Path) -> bool:
    # os.stat opens no descriptor, so it cannot drop this process's locks (see `probe`)
    try:
        return Path(f"{p}-wal").stat().st_size > 0
    except OSError:
        return False


def probe(p: Path) -> int:
    """The file's application_id, read by SQLite itself; NotOurs for an empty or non-SQLite file.

    Never `open()`: POSIX locks belong to the process, and closing any descriptor of the
    file drops all of them, SQLite's included, when this process already holds a
    connection to it (the window does while it opens a report, scores or refreshes);
    the next program to close then takes itself for the last one and checkpoints and
    removes the WAL under the window.  SQLite shares one lock record per file among its
    connections and keeps a closing descriptor open while another connection holds a
    lock.  `immutable` reads the header without locks and without -wal/-shm files, so a
    file that turns out not to be ours is not touched; application_id is written at
    creation, so the file's own header has it even while the WAL holds newer pages."""
    try:
        if p.stat().st_size == 0:  # stat opens no descriptor
            raise NotOurs(f"{p} is an empty file, not an MCQ Lens database; nothing was changed "
                          "(remove it, or choose another --db)")
    except OSError as exc:
        raise StoreError(f"cannot read {p}: {exc.strerror or exc}") from exc
    for pause in PROBE_RETRIES + (None,):
        conn = None
        try:
            conn = connect(uri(p, mode="ro", immutable=1), uri=True)
            return int(conn.execute("PRAGMA application_id").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            not_sqlite = (getattr(exc, "sqlite_errorname", "") == "SQLITE_NOTADB"
                          or "not a database" in str(exc).lower())
            if pause is not None and (not_sqlite or "malformed" in str(exc).lower()):
                # without locks the header can be read while another process's checkpoint rewrites
                # it (seen: eight processes opening one new database at once); a foreign or damaged
                # file reads the same again
                time.sleep(pause)
                continue
            if not_sqlite:
                raise NotOurs(f"{p} is not an SQLite database, so not an MCQ Lens database; "
                              "nothing was changed") from None
            if not os.access(p, os.R_OK):
                raise StoreError(f"cannot read {p}: {os.strerror(errno.EACCES)}") from exc
            raise translate(exc, str(p)) from exc
        finally:
            close_quietly(conn)
    raise AssertionError("unreachable: the last attempt returns or raises")


def open_read_only(p: Path, may_checkpoint: bool = True) -> tuple[sqlite3.Connection, int]:
    """A connection that cannot write, and the schema version; NotOurs for a foreign file.

    The file is recognised through SQLite only (`probe`: empty file, not SQLite, another
    program's application_id: refused, never opened for reading or writing).  Then, the
    first of these that opens:
    - in a folder we may write to, without a rollback journal beside it, our database
      (marked) or one whose `-wal` holds no changes is opened normally with
      `PRAGMA query_only`, so that SQLite removes the `-wal`/`-shm` side files it needs
      for reading when the connection closes (a `mode=ro` reader leaves them behind);
      a marker-less file with changes waiting in its `-wal` is not (closing the last
      connection would move them into the file), nor one with a `-journal` (opening it
      normally would roll that back into the file), nor one where `may_checkpoint` is
      False (a network file system);
    - `mode=ro`;
    - where SQLite cannot create the side files (a read-only folder or mount, a full
      disk) and the `-wal` file is absent or empty (closed cleanly, nobody writing: a
      writer would have made both files), the file alone is the database and is read
      as `immutable`."""
    app_id = probe(p)
    if app_id not in (0, recognise.APPLICATION_ID):
        raise NotOurs(f"{p} is another program's SQLite database (application_id {app_id:#x}), not an "
                      "MCQ Lens database; nothing was changed")
    writable = os.access(p, os.W_OK) and os.access(p.parent, os.W_OK)
    journal = Path(f"{p}-journal").exists()  # stat only, like every look at the side files
    attempts = []
    if may_checkpoint and writable and not journal and (app_id == recognise.APPLICATION_ID or not wal_has_content(p)):
        attempts.append((str(p), False))
    attempts += [(uri(p, mode="ro"), True), (uri(p, mode="ro", immutable=1), True)]
    first = last = None
    for n, (target, is_uri) in enumerate(attempts):
        if n == len(attempts) - 1 and wal_has_content(p):  # immutable would not see the WAL's changes
            why = why_not_writable(str(p)) or str(first)
            raise StoreError(f"cannot read {p} ({why}): its write-ahead log {p}-wal holds changes that SQLite can "
                             "only read where it may create files next to it; copy the database and its -wal file "
                             "to a writable folder")
        conn = None
        try:
            conn = connect(target, uri=is_uri)
            if not is_uri:
                conn.execute("PRAGMA query_only = ON")
            return conn, recognise.identify(conn, str(p))
        except NotOurs:
            close_quietly(conn)
            raise
        except (sqlite3.Error, OSError) as exc:
            close_quietly(conn)
            first, last = first or exc, exc
    raise translate(last, str(p)) from last


def create_database(p: Path) -> None:
    """Make the database at `p` if nobody has: built in a temporary file next to it, with the
    marker, the current schema and WAL, then hard-linked into place (atomic: never half a
    database, never a "table already exists" for a second process doing the same)."""
    tmp = p.with_name(f".{p.name}.new-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("BEGIN")
            for version in range(1, schema.SCHEMA_VERSION + 1):
                schema.MIGRATIONS[version](conn)
                schema.set_version(conn, version)
            conn.execute(f"PRAGMA application_id = {recognise.APPLICATION_ID}")
            conn.execute("COMMIT")
            conn.execute("PRAGMA journal_mode = WAL")  # stays in the file's header
        finally:
            conn.close()
        try:
            os.link(tmp, p)
        except FileExistsError:
            pass  # another process created it first: we open theirs
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
                raise
            # a file system without hard links (FAT, some network shares): a plain rename,
            # checked first; two processes racing here within microseconds is the limit
            if not p.exists():
                os.rename(tmp, p)
    except (sqlite3.Error, OSError) as exc:
        raise translate(exc, str(p)) from exc
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
