"""`mcqlens export`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("export", help="(not yet available)")
