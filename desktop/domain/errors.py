"""Typed errors raised inside the product; the command line turns them into `error:` lines."""
from __future__ import annotations


class McqLensError(Exception):
    """Base of every error the product reports to a user in words."""


class InputError(McqLensError):
    """A file the user brought is malformed: names the file, the record and the field."""

    def __init__(self, file: str, record: str | int | None, field: str | None, message: str):
        self.file, self.record, self.field, self.message = str(file), record, field, message
        where = [self.file]
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field {field}")
        super().__init__(f"{', '.join(where)}: {message}")


class StoreError(McqLensError):
    """The database cannot do what was asked (locked, read-only, unknown item, ...).

    The kinds a caller acts on are subclasses, chosen where SQLite's error is read
    (`desktop.store.sqlite_errors.translate`); code elsewhere tells them apart with
    `isinstance`, never by the message, whose words are for people."""


class ReadOnly(StoreError):
    """The database cannot be written here (read-only file, folder or mount; opened for reading)."""


class DiskFull(StoreError):
    """The disk holding the database is full: nothing was saved."""


class Locked(StoreError):
    """Another program held the write lock longer than the busy timeout."""


class NotOurs(StoreError):
    """The file is not an MCQ Lens database (not SQLite, empty, or another program's): nothing was
    read from it or written to it."""


class Corrupt(StoreError):
    """The file is damaged (SQLite reports a malformed database, or a stored value is not what it was written as)."""


class NewerSchema(StoreError):
    """The database was made by a newer MCQ Lens: this one cannot read its schema; nothing was changed."""


class NetworkFilesystem(StoreError):
    """The database lives on a network file system (NFS, SMB/CIFS, sshfs, ...), where SQLite's locks and
    its write-ahead log's shared memory are not reliable: not written unless the user insists."""


class ModelError(McqLensError):
    """A model directory is missing, inconsistent, or cannot run here."""
