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
    """The database cannot do what was asked (locked, read-only, unknown item, ...)."""


class ModelError(McqLensError):
    """A model directory is missing, inconsistent, or cannot run here."""
