"""`mcqlens score`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("score", help="(not yet available)")
