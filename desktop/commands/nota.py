"""`mcqlens nota`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("nota", help="(not yet available)")
