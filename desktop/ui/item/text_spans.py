"""Pure rules for marking spans in a passage: word snapping, word steps, paragraphs, Qt offsets.

Kept free of Qt so that the rules are tested on plain strings; the passage view
calls them with Python string indices (the store's offsets).
"""
from __future__ import annotations

import bisect

# Letters, digits and the joiners inside words (don't, well-known, 3.5).
_JOINERS = "'’-"


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _inside_word(text: str, i: int) -> bool:
    """True when position i (between text[i-1] and text[i]) is inside a word."""
    if i <= 0 or i >= len(text):
        return False
    left, right = text[i - 1], text[i]
    if _is_word(left) and _is_word(right):
        return True
    # A joiner between two word characters: "don't", "well-known".
    if left in _JOINERS and _is_word(right) and i >= 2 and _is_word(text[i - 2]):
        return True
    if right in _JOINERS and _is_word(left) and i + 1 < len(text) and _is_word(text[i + 1]):
        return True
    return False


def snap_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow [start, end) to whole words and trim the white space at both ends.

    A selection that only touches part of a word takes the whole word, as a
    linguist marking "confusing phra" means "confusing phrase".
    """
    start, end = max(0, min(start, end)), min(len(text), max(start, end))
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        return start, end
    while _inside_word(text, start):
        start -= 1
    while _inside_word(text, end):
        end += 1
    return start, end


def next_word_end(text: str, pos: int) -> int:
    """End of the word after pos (for growing a span to the right)."""
    n = len(text)
    i = pos
    while i < n and not _is_word(text[i]):
        i += 1
    while i < n and (_is_word(text[i]) or _inside_word(text, i)):
        i += 1
    # Keep sentence punctuation that closes the word ("teenagers.").
    while i < n and text[i] in ".,;:!?\"”)’":
        i += 1
    return i if i > pos else pos


def previous_word_end(text: str, pos: int, floor: int = 0) -> int:
    """End of the word before the last word that ends at or before pos (shrinking to the left)."""
    i = pos
    while i > floor and not _is_word(text[i - 1]):
        i -= 1
    while i > floor and (_is_word(text[i - 1]) or _inside_word(text, i - 1)):
        i -= 1
    while i > floor and text[i - 1].isspace():
        i -= 1
    return max(i, floor)


def next_word_start(text: str, pos: int, ceiling: int | None = None) -> int:
    """Start of the word after the one at pos (moving a span's start to the right)."""
    ceiling = len(text) if ceiling is None else ceiling
    i = pos
    while i < ceiling and (_is_word(text[i]) or _inside_word(text, i)):
        i += 1
    while i < ceiling and not _is_word(text[i]):
        i += 1
    return min(i, ceiling)


def previous_word_start(text: str, pos: int) -> int:
    """Start of the word before pos (moving a span's start to the left)."""
    i = pos
    while i > 0 and not _is_word(text[i - 1]):
        i -= 1
    while i > 0 and (_is_word(text[i - 1]) or _inside_word(text, i - 1)):
        i -= 1
    return i


def paragraph_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow [start, end) to the whole paragraphs (lines of the source) it touches."""
    s = text.rfind("\n", 0, start) + 1
    e = text.find("\n", max(end - 1, start))
    return s, (len(text) if e < 0 else e)


class OffsetMap:
    """Python string index <-> Qt document position.

    Qt counts UTF-16 code units, so a character outside the Basic Multilingual
    Plane (an emoji in a passage) takes two positions there and one in Python.
    """

    def __init__(self, text: str):
        self._astral = [i for i, ch in enumerate(text) if ord(ch) > 0xFFFF]

    def to_qt(self, index: int) -> int:
        if not self._astral:
            return index
        return index + bisect.bisect_left(self._astral, index)

    def to_py(self, pos: int) -> int:
        if not self._astral:
            return pos
        # Walk back: each astral character before the index adds one Qt position.
        index = pos
        while index > 0 and index + bisect.bisect_left(self._astral, index) > pos:
            index -= 1
        return index
