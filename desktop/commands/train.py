"""`mcqlens train`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("train", help="(not yet available)")
