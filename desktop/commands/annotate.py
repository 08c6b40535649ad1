"""`mcqlens annotate`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("annotate", help="(not yet available)")
