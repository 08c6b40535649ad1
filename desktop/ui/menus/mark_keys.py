"""The keys that mark a selection, for the Mark bar, the Mark menu and the shortcut sheet.

E marks evidence and P required paragraphs, so an item's fifth alternative, E, cannot
use its letter: its basis is marked with 5 (every basis has its number key, 1–9; the
letters A–D work too).  One place names the keys, so the bar, the menu, the passage
view and the help sheet never disagree.
"""
from __future__ import annotations

from desktop.domain.model import letter

EVIDENCE_KEY = "E"
REQUIRED_KEY = "P"
_TAKEN = {EVIDENCE_KEY.lower(), REQUIRED_KEY.lower()}


def basis_key(i: int) -> str:
    """The key shown for the basis of alternative i (0-based): its number."""
    return str(i + 1) if i < 9 else ""


def letter_key(i: int) -> str | None:
    """The alternative's letter when it is free (not E = evidence, not P = paragraphs)."""
    k = letter(i).lower()
    return None if k in _TAKEN or i >= 10 else k.upper()


def basis_button_text(i: int) -> str:
    return f"{letter(i)} ({basis_key(i)})" if basis_key(i) else letter(i)


def basis_tooltip(i: int) -> str:
    keys = " or ".join(k for k in (basis_key(i), letter_key(i)) if k)
    text = f"Mark the selection as the basis of alternative {letter(i)} (key {keys})"
    if letter_key(i) is None:
        text += f"; the letter {letter(i)} is taken: " + ("E marks evidence" if letter(i) == "E"
                                                          else "P marks required paragraphs")
    return text
