"""`mcqlens import`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("import", help="(not yet available)")
