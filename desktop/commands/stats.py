"""`mcqlens stats`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("stats", help="(not yet available)")
