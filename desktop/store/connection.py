"""One open annotations.db: its transactions, its queries, its migration, and SQLite's
errors turned into typed StoreErrors (`translate`: the one place that reads them).

Every write goes through `transaction()`: `BEGIN IMMEDIATE` takes the write lock at
the start, so a second program waits (busy timeout) instead of failing half-way
through a read-then-write, and after the timeout the user reads
"database is locked by another program" rather than a traceback.

How a file is recognised, created and opened is `opening.py`; which way the window,
the commands and the workers open it is `door.py`.
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

from desktop.domain.errors import Corrupt, DiskFull, Locked, NotOurs, ReadOnly, StoreError

from . import recognise, schema

BUSY_TIMEOUT_S = 5.0


def translate(exc: BaseException, where: str, opened_read_only: bool = False) -> StoreError:
    """The typed, user-readable StoreError for an SQLite or OS failure: the one place where
    SQLite's error is read (its words; the kind is then the class, see desktop/domain/errors.py)."""
    if isinstance(exc, StoreError):
        return exc
    text = str(exc).lower()
    if opened_read_only and ("readonly" in text or "read-only" in text):
        return ReadOnly(f"read-only: opened for reading, cannot save changes to {where}")
    if "locked" in text or "busy" in text:
        return Locked(f"database is locked by another program: {where} (tried for {BUSY_TIMEOUT_S:.0f} s)")
    if "disk is full" in text or getattr(exc, "errno", None) == errno.ENOSPC:
        return DiskFull(f"disk full: nothing was saved in {where}")
    why = why_not_writable(where)
    if "readonly" in text or "read-only" in text:
        if why == "disk full":
            return DiskFull(f"disk full: nothing was saved in {where}")
        return ReadOnly(f"read-only: cannot save changes to {where}" + (f" ({why})" if why else ""))
    if ("unable to open" in text or "disk i/o" in text) and why:
        if why == "disk full":
            return DiskFull(f"disk full: nothing was saved in {where}")
        return ReadOnly(f"read-only: cannot save changes to {where} ({why})")
    if "not a database" in text or "malformed" in text:
        kind = Corrupt if "malformed" in text else NotOurs
        return kind(f"not an MCQ Lens database (or damaged): {where}")
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


def connect(target: str, uri: bool = False) -> sqlite3.Connection:
    """An SQLite connection as every part of the store uses it: autocommit (transactions are
    explicit), shareable with the worker thread under `Connection.lock`, busy timeout."""
    conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=uri)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return conn


def uri(path: Path, **params) -> str:
    return f"{path.resolve().as_uri()}?{urlencode(params)}"


def close_quietly(conn) -> None:
    try:
        conn.close()
    except (sqlite3.Error, AttributeError):
        pass


class Connection:
    """One SQLite connection with a lock, so a worker thread can share the store safely.

    Made by `opening.open_file` (a file) or `Connection.memory()`.  `read_only`: opened with
    `mode=ro`, `immutable` or `query_only`; an older schema is then read through an upgraded
    copy in memory (`in_memory_copy`), the file untouched."""

    def __init__(self, conn: sqlite3.Connection, path: str, read_only: bool = False, found_version: int = 0):
        self.conn = conn
        self.path = path
        self.lock = threading.RLock()
        self.read_only = read_only
        self.in_memory_copy = False
        self.found_version = found_version
        self._migrated: int | None = None

    @classmethod
    def memory(cls) -> "Connection":
        """A private in-memory database; `migrate` gives it the whole schema."""
        conn = connect(":memory:")
        conn.execute("PRAGMA foreign_keys = ON")
        return cls(conn, ":memory:")

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
                rollback(conn)
                raise translate(exc, self.path, self.read_only) from exc
            except BaseException:
                rollback(conn)
                raise
            try:
                conn.execute("COMMIT")
            except (sqlite3.Error, OSError) as exc:
                rollback(conn)
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
        if self._migrated is not None:  # once per connection, whoever asks again
            return self._migrated
        found = self.found_version
        if found == schema.SCHEMA_VERSION:
            self._migrated = found
            return found
        with self.lock:
            if self.read_only:
                mem = connect(":memory:")
                try:
                    self.conn.backup(mem)
                except sqlite3.Error as exc:
                    close_quietly(mem)
                    raise translate(exc, self.path, self.read_only) from exc
                close_quietly(self.conn)
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
        self._migrated = found
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


def rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass
