"""How `Store` offers its parts' methods as its own: `store.undo()` calls `store.undoing.undo()`.

The parts (reads, edits, undo, the audit trail, ...) are objects with a small public surface;
callers keep the one `Store` interface they always had, and a part's method is documented
(and its signature shown) where it is written.
"""
from __future__ import annotations

import functools


def forward(part_class: type, name: str, part: str):
    """A Store method that calls `getattr(store, part).<name>` (`part_class.<name>` gives its
    signature and docstring)."""
    method = getattr(part_class, name)

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        return getattr(getattr(self, part), name)(*args, **kwargs)
    return call
