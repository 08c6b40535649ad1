"""`mcqlens expmrc`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("expmrc", help="(not yet available)")
