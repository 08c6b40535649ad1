"""`mcqlens gui`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("gui", help="(not yet available)")
