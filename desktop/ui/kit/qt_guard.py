"""Keep Python 3.11 alive under PySide6 6.12.0's lost reference to None.

PySide6 6.12.0 returns None from void methods (QLabel.setText, QTreeWidgetItem.setText,
QPainter.setPen, ...) without taking a new reference, so each call takes one
reference away from None; after a few thousand calls CPython 3.11 aborts with
"none_dealloc: deallocating None".  Python 3.12 made None immortal (PEP 683), which
hides the bug there.  On older Pythons we give None a reserve of references large
enough for any session, which is what 3.12 does by design.
"""
from __future__ import annotations

import ctypes
import sys

_RESERVE = 1 << 40


def guard_none() -> None:
    if sys.version_info >= (3, 12) or hasattr(sys, "getobjects"):  # immortal None, or a debug build
        return
    refcount = ctypes.c_ssize_t.from_address(id(None))  # ob_refcnt is the first field of every object
    if refcount.value < _RESERVE:
        refcount.value += _RESERVE
