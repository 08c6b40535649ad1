"""Opening annotations.db: pragmas, transactions, and SQLite errors turned into StoreError.

Every write goes through `transaction()`: `BEGIN IMMEDIATE` takes the write lock at
the start, so a second program waits (busy timeout) instead of failing half-way
through a read-then-write, and after the timeout the user reads
"database is locked by another program" rather than a traceback.
"""
from __future__ import annotations

import contextlib
import errno
import secrets
import shutil
import sqlite3
import threading
from pathlib import Path

from desktop.domain.errors import StoreError

from . import schema

BUSY_TIMEOUT_S = 5.0


def translate(exc: BaseException, where: str) -> StoreError:
    """A user-readable StoreError for an SQLite or OS failure."""
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return StoreError(f"database is locked by another program: {where} (tried for {BUSY_TIMEOUT_S:.0f} s)")
    if "readonly" in text or "read-only" in text:
        return StoreError(f"database is read-only, cannot save changes: {where}")
    if "disk is full" in text or getattr(exc, "errno", None) == errno.ENOSPC:
        return StoreError(f"disk full, nothing was saved: {where}")
    if "not a database" in text or "malformed" in text:
        return StoreError(f"not an MCQ Lens database (or damaged): {where}")
    if "unable to open" in text:
        return StoreError(f"cannot open database: {where}")
    return StoreError(f"database error on {where}: {exc}")


class Connection:
    """One SQLite connection with a lock, so a worker thread can share the store safely."""

    def __init__(self, path: str | None):
        self.path = path or ":memory:"
        self.lock = threading.RLock()
        try:
            self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                        check_same_thread=False)
            self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            self.conn.execute("PRAGMA foreign_keys = ON")
            if path:
                mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise sqlite3.OperationalError(f"could not switch to WAL ({mode}): attempt to write a readonly database")
            # FULL: an acknowledged change survives a power cut too, not only a killed process
            self.conn.execute("PRAGMA synchronous = FULL")
        except (sqlite3.Error, OSError) as exc:
            raise translate(exc, self.path) from exc

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
                raise translate(exc, self.path) from exc
            try:
                yield conn
            except (sqlite3.Error, OSError) as exc:
                _rollback(conn)
                raise translate(exc, self.path) from exc
            except BaseException:
                _rollback(conn)
                raise
            try:
                conn.execute("COMMIT")
            except (sqlite3.Error, OSError) as exc:
                _rollback(conn)
                raise translate(exc, self.path) from exc

    def query(self, sql: str, params=()) -> list[sqlite3.Row]:
        with self.lock:
            try:
                cur = self.conn.execute(sql, params)
                cur.row_factory = sqlite3.Row
                return cur.fetchall()
            except (sqlite3.Error, OSError) as exc:
                raise translate(exc, self.path) from exc

    def migrate(self) -> int:
        """Bring the schema to the current version; returns the version found before."""
        with self.lock:
            try:
                found = schema.current_version(self.conn)
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc
            if found > schema.SCHEMA_VERSION:
                raise StoreError(f"{self.path} was made by a newer MCQ Lens (schema {found}, "
                                 f"this one knows up to {schema.SCHEMA_VERSION})")
            if found == schema.SCHEMA_VERSION:
                return found
            if found > 0 and self.path != ":memory:":
                self.backup(f"{self.path}.bak-v{found}")
            for version in range(found + 1, schema.SCHEMA_VERSION + 1):
                with self.transaction() as conn:
                    schema.MIGRATIONS[version](conn)
                    schema.set_version(conn, version)
            return found

    def backup(self, target: str) -> None:
        """A consistent copy (WAL content included) written next to the database."""
        tmp = f"{target}.tmp"
        try:
            dest = sqlite3.connect(tmp)
            try:
                self.conn.backup(dest)
            finally:
                dest.close()
            shutil.move(tmp, target)
        except (sqlite3.Error, OSError) as exc:
            Path(tmp).unlink(missing_ok=True)
            raise translate(exc, target) from exc


def _rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass
