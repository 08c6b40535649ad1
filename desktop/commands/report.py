"""`mcqlens report`: (being written)."""
from __future__ import annotations


def register(sub) -> None:
    sub.add_parser("report", help="(not yet available)")
