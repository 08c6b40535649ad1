"""Opening annotations.db: recognising it, creating it, pragmas, transactions, and SQLite
errors turned into StoreError.

Every write goes through `transaction()`: `BEGIN IMMEDIATE` takes the write lock at
the start, so a second program waits (busy timeout) instead of failing half-way
through a read-then-write, and after the timeout the user reads
"database is locked by another program" rather than a traceback.

Opening never writes to a file MCQ Lens did not create: an existing file is first
opened read-only (`file:...?mode=ro`) and recognised (`recognise.identify`); only then,
and only when writing was asked for, is it opened for writing.  A new database is
built in a temporary file next to the target and hard-linked into place, so it
appears whole (schema, marker, WAL) or not at all, and processes creating the same
database at once all end up opening the one that won.

Only SQLite opens the database file and its -wal/-shm/-journal: a descriptor opened
and closed beside SQLite's would drop this process's locks on it (see `_probe`).
Looking at the side files is done with `os.stat`, which opens nothing.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import sqlite3
import threading
from pathlib import Path
from urllib.parse import urlencode

from desktop.domain.errors import StoreError

from . import recognise, schema

BUSY_TIMEOUT_S = 5.0


def translate(exc: BaseException, where: str, opened_read_only: bool = False) -> StoreError:
    """A user-readable StoreError for an SQLite or OS failure."""
    if isinstance(exc, StoreError):
        return exc
    text = str(exc).lower()
    if opened_read_only and ("readonly" in text or "read-only" in text):
        return StoreError(f"read-only: opened for reading, cannot save changes to {where}")
    if "locked" in text or "busy" in text:
        return StoreError(f"database is locked by another program: {where} (tried for {BUSY_TIMEOUT_S:.0f} s)")
    if "disk is full" in text or getattr(exc, "errno", None) == errno.ENOSPC:
        return StoreError(f"disk full: nothing was saved in {where}")
    why = why_not_writable(where)
    if "readonly" in text or "read-only" in text:
        if why == "disk full":
            return StoreError(f"disk full: nothing was saved in {where}")
        return StoreError(f"read-only: cannot save changes to {where}" + (f" ({why})" if why else ""))
    if ("unable to open" in text or "disk i/o" in text) and why:
        if why == "disk full":
            return StoreError(f"disk full: nothing was saved in {where}")
        return StoreError(f"read-only: cannot save changes to {where} ({why})")
    if "not a database" in text or "malformed" in text:
        return StoreError(f"not an MCQ Lens database (or damaged): {where}")
    if "unable to open" in text:
        return StoreError(f"cannot open database: {where}")
    return StoreError(f"database error on {where}: {exc}")


def why_not_writable(path: str) -> str | None:
    """"read-only file system", "disk full", "no write permission", or None: why SQLite could
    not write `path` (asked after a failure, to name the cause instead of "I/O error")."""
    if not path or path == ":memory:":
        return None
    p = Path(path)
    folder = p.parent
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return "read-only file system"
    if st.f_bavail * st.f_frsize < 64 * 1024:
        return "disk full"
    if (p.exists() and not os.access(p, os.W_OK)) or not os.access(folder, os.W_OK):
        return "no write permission"
    return None


def _connect(target: str, uri: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=uri)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return conn


def _uri(path: Path, **params) -> str:
    return f"{path.resolve().as_uri()}?{urlencode(params)}"


def _close(conn) -> None:
    try:
        conn.close()
    except (sqlite3.Error, AttributeError):
        pass


def _check_file(p: Path, create: bool) -> None:
    if p.is_dir():
        raise StoreError(f"{p} is a folder, not a database file")
    if p.exists() and not p.is_file():
        raise StoreError(f"{p} is not a regular file (a device, pipe or socket is not a database)")
    if not p.exists():
        if not create:
            raise StoreError(f"no database at {p}; import files first: mcqlens import PATH --db {p}")
        if not p.parent.exists():
            raise StoreError(f"cannot create database {p}: folder {p.parent} does not exist")


def _wal_has_content(p: Path) -> bool:
    # os.stat opens no descriptor, so it cannot drop this process's locks (see `_probe`)
    try:
        return Path(f"{p}-wal").stat().st_size > 0
    except OSError:
        return False


def _probe(p: Path) -> int:
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
            raise recognise.NotOurs(f"{p} is an empty file, not an MCQ Lens database; nothing was changed "
                                    "(remove it, or choose another --db)")
    except OSError as exc:
        raise StoreError(f"cannot read {p}: {exc.strerror or exc}") from exc
    conn = None
    try:
        conn = _connect(_uri(p, mode="ro", immutable=1), uri=True)
        return int(conn.execute("PRAGMA application_id").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_NOTADB" or "not a database" in str(exc).lower():
            raise recognise.NotOurs(f"{p} is not an SQLite database, so not an MCQ Lens database; "
                                    "nothing was changed") from None
        if not os.access(p, os.R_OK):
            raise StoreError(f"cannot read {p}: {os.strerror(errno.EACCES)}") from exc
        raise translate(exc, str(p)) from exc
    finally:
        _close(conn)


def open_read_only(p: Path) -> tuple[sqlite3.Connection, int]:
    """A connection that cannot write, and the schema version; NotOurs for a foreign file.

    The file is recognised through SQLite only (`_probe`: empty file, not SQLite, another
    program's application_id: refused, never opened for reading or writing).  Then:
    - in a folder we may write to, without a rollback journal beside it, our database
      (marked) or one whose `-wal` holds no changes is opened normally with
      `PRAGMA query_only`, so that SQLite removes the `-wal`/`-shm` side files it needs
      for reading when the connection closes (a `mode=ro` reader leaves them behind);
      a marker-less file with changes waiting in its `-wal` is not (closing the last
      connection would move them into the file), nor one with a `-journal` (opening it
      normally would roll that back into the file);
    - anything else is opened with `mode=ro`;
    - where SQLite cannot create the side files (a read-only folder or mount, a full
      disk) and the `-wal` file is absent or empty (closed cleanly, nobody writing: a
      writer would have made both files), the file alone is the database and is read
      as `immutable`."""
    app_id = _probe(p)
    if app_id not in (0, recognise.APPLICATION_ID):
        raise recognise.NotOurs(f"{p} is another program's SQLite database (application_id {app_id:#x}), not an "
                                "MCQ Lens database; nothing was changed")
    writable = os.access(p, os.W_OK) and os.access(p.parent, os.W_OK)
    journal = Path(f"{p}-journal").exists()  # stat only, like every look at the side files
    attempts = []
    if writable and not journal and (app_id == recognise.APPLICATION_ID or not _wal_has_content(p)):
        attempts.append((str(p), False))
    attempts.append((_uri(p, mode="ro"), True))
    first: BaseException | None = None
    for target, uri in attempts:
        conn = None
        try:
            conn = _connect(target, uri=uri)
            if not uri:
                conn.execute("PRAGMA query_only = ON")
            return conn, recognise.identify(conn, str(p))
        except recognise.NotOurs:
            _close(conn)
            raise
        except (sqlite3.Error, OSError) as exc:
            _close(conn)
            first = first or exc
    if _wal_has_content(p):
        why = why_not_writable(str(p)) or str(first)
        raise StoreError(f"cannot read {p} ({why}): its write-ahead log {p}-wal holds changes that SQLite can "
                         "only read where it may create files next to it; copy the database and its -wal file "
                         "to a writable folder")
    conn = None
    try:
        conn = _connect(_uri(p, mode="ro", immutable=1), uri=True)
        return conn, recognise.identify(conn, str(p))
    except recognise.NotOurs:
        _close(conn)
        raise
    except (sqlite3.Error, OSError) as exc:
        _close(conn)
        raise translate(exc, str(p)) from exc


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


class Connection:
    """One SQLite connection with a lock, so a worker thread can share the store safely.

    `read_only`: opened with `mode=ro` (or `immutable`); an older schema is then read
    through an upgraded copy in memory (`in_memory_copy`), the file untouched."""

    def __init__(self, path: str | None, read_only: bool = False, create: bool = True):
        self.path = str(path) if path else ":memory:"
        self.lock = threading.RLock()
        self.read_only = read_only
        self.in_memory_copy = False
        self.found_version = 0
        if not path:
            self.conn = _connect(":memory:")
            self.conn.execute("PRAGMA foreign_keys = ON")
            return
        p = Path(path)
        _check_file(p, create and not read_only)
        if not p.exists():
            create_database(p)
        # recognise it before anything could write to it
        conn, self.found_version = open_read_only(p)
        if self.found_version > schema.SCHEMA_VERSION:
            _close(conn)
            raise StoreError(f"{self.path} was made by a newer MCQ Lens (schema {self.found_version}, "
                             f"this one knows up to {schema.SCHEMA_VERSION}); nothing was changed")
        if read_only:
            self.conn = conn
            return
        _close(conn)
        try:
            self.conn = _connect(self.path)
            self.conn.execute("PRAGMA foreign_keys = ON")
            mode = self.conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise sqlite3.OperationalError(f"could not switch to WAL ({mode}): attempt to write a readonly "
                                                   "database")
            # FULL: an acknowledged change survives a power cut too, not only a killed process
            self.conn.execute("PRAGMA synchronous = FULL")
        except (sqlite3.Error, OSError) as exc:
            _close(getattr(self, "conn", None))
            raise translate(exc, self.path, self.read_only) from exc

    def close(self) -> None:
        with self.lock:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass

    @contextlib.contextmanager
    def transaction(self):
        """One write transaction (a savepoint when nested); SQLite errors become StoreError."""
        with self.lock:
            conn = self.conn
            if conn.in_transaction:
                name = f"sp_{secrets.token_hex(8)}"
                conn.execute(f"SAVEPOINT {name}")
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                        conn.execute(f"RELEASE SAVEPOINT {name}")
                    raise
                else:
                    conn.execute(f"RELEASE SAVEPOINT {name}")
                return
            try:
                conn.execute("BEGIN IMMEDIATE")
            except (sqlite3.Error, OSError) as exc:
                raise translate(exc, self.path, self.read_only) from exc
            try:
                yield conn
            except (sqlite3.Error, OSError) as exc:
                _rollback(conn)
                raise translate(exc, self.path, self.read_only) from exc
            except BaseException:
                _rollback(conn)
                raise
            try:
                conn.execute("COMMIT")
            except (sqlite3.Error, OSError) as exc:
                _rollback(conn)
                raise translate(exc, self.path, self.read_only) from exc

    def query(self, sql: str, params=()) -> list[sqlite3.Row]:
        with self.lock:
            try:
                cur = self.conn.execute(sql, params)
                cur.row_factory = sqlite3.Row
                return cur.fetchall()
            except (sqlite3.Error, OSError) as exc:
                raise translate(exc, self.path, self.read_only) from exc

    def migrate(self) -> int:
        """Bring the schema to the current version; returns the version found before.

        A file opened for writing is upgraded in place after a backup copy; one opened
        read-only is copied into memory and the copy upgraded (the file stays as it was);
        a fresh in-memory database gets the whole schema."""
        found = self.found_version
        if found == schema.SCHEMA_VERSION:
            return found
        with self.lock:
            if self.read_only:
                mem = _connect(":memory:")
                try:
                    self.conn.backup(mem)
                except sqlite3.Error as exc:
                    _close(mem)
                    raise translate(exc, self.path, self.read_only) from exc
                _close(self.conn)
                self.conn, self.in_memory_copy = mem, True
            elif self.path != ":memory:":
                self._backup_before_upgrade(found)
            for version in range(found + 1, schema.SCHEMA_VERSION + 1):
                with self.transaction() as conn:
                    # another process may have upgraded since we looked: never twice
                    if self.path != ":memory:" and not self.in_memory_copy \
                            and schema.current_version(conn) >= version:
                        continue
                    schema.MIGRATIONS[version](conn)
                    schema.set_version(conn, version)
                    if found == 0:
                        conn.execute(f"PRAGMA application_id = {recognise.APPLICATION_ID}")
            if self.in_memory_copy:
                self.conn.execute("PRAGMA query_only = ON")  # a copy: writing to it would save nothing
        return found

    def _backup_before_upgrade(self, found: int) -> None:
        """`<db>.bak-v<found>`; a copy taken after another process upgraded is dropped."""
        target = f"{self.path}.bak-v{found}"
        tmp = f"{target}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
        self.backup(tmp)
        try:
            check = sqlite3.connect(tmp)
            try:
                version = schema.current_version(check)
            finally:
                check.close()
            if version == found:
                os.replace(tmp, target)
        except (sqlite3.Error, OSError) as exc:
            raise translate(exc, target) from exc
        finally:
            Path(tmp).unlink(missing_ok=True)

    def backup(self, target: str) -> None:
        """A consistent copy (WAL content included) written next to the database."""
        tmp = f"{target}.tmp"
        try:
            dest = sqlite3.connect(tmp)
            try:
                self.conn.backup(dest)
            finally:
                dest.close()
            os.replace(tmp, target)
        except (sqlite3.Error, OSError) as exc:
            Path(tmp).unlink(missing_ok=True)
            raise translate(exc, target) from exc


def _rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass
