"""`mcqlens agreement`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("agreement", help="(not yet available)")
