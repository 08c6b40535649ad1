"""`mcqlens merge`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("merge", help="(not yet available)")
