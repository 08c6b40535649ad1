"""The words of an item that an explanation considers, and the item with some of them taken out.

`words(text)` finds the words of an element exactly as stored (`text[start:end] == word`); `units`
lists them for the stem and every alternative; `occlude` deletes (or masks) some, `keep_only` all
but some.  Apart from `inference.giveaway` (which scores the copies) so that the search for the
words that take most away together (`inference.giveaway_search`) can make its copies without
importing the module that calls it."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from typing import Sequence

from desktop.domain.errors import ModelError
from inference.giveaway_result import ALL, CONTENT, DEFAULT_METHOD, FUNCTION_WORDS, MASK, Unit

# letters/digits of any script; inner hyphens and apostrophes join; . and , join digits
_WORD = re.compile(r"[^\W_]+(?:(?:[-‐‑'’]|(?<=\d)[.,](?=\d))[^\W_]+)*")


def words(text: str) -> list[tuple[int, int]]:
    """(start, end) of every word of `text`, in order: `text[start:end]` is the word."""
    return [m.span() for m in _WORD.finditer(text or "")]


def fingerprint(stem: str, alternatives: Sequence[str]) -> str:
    """A digest of what the shortcut model reads of an item: an explanation stored for an item
    is shown again only while its stem and alternatives are the same."""
    text = json.dumps([stem, list(alternatives)], ensure_ascii=False)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def units(question, phrase: int = 1, scope: str = ALL) -> list[Unit]:
    """The words of the stem and of every alternative (and, with `phrase` > 1, every run of
    up to `phrase` adjacent words of one element), in text order; with `scope` "content" no
    single function word (FUNCTION_WORDS).  These are the words an explanation of that scope
    considers ("screened" considers them all)."""
    out: list[Unit] = []
    elements = [(None, question.stem)] + list(enumerate(question.alternatives))
    for alt, text in elements:
        spans = words(text)
        for i in range(len(spans)):
            for n in range(1, max(1, phrase) + 1):
                if i + n > len(spans):
                    break
                start, end = spans[i][0], spans[i + n - 1][1]
                if n == 1 and scope == CONTENT and text[start:end].lower() in FUNCTION_WORDS:
                    continue
                out.append(Unit(alt, start, end, text[start:end]))
    return out


def _edit(text: str, spans: Sequence[tuple[int, int]], replacement: str) -> str:
    """`text` with every span replaced (spans may overlap: they are merged first)."""
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, pos = [], 0
    for s, e in merged:
        out.append(text[pos:s])
        out.append(replacement)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def occlude(question, removed: Sequence[Unit], method: str = DEFAULT_METHOD, mask: str | None = None):
    """A copy of `question` with the given units deleted (or masked, one mask per unit)."""
    if method == MASK and not mask:
        raise ModelError("masking needs the tokenizer's mask token; this tokenizer has none (use deletion)")
    replacement = mask if method == MASK else ""
    by_element: dict[int | None, list[tuple[int, int]]] = {}
    for u in removed:
        by_element.setdefault(u.alternative, []).append((u.start, u.end))
    stem = _edit(question.stem, by_element.get(None, []), replacement)
    alternatives = [_edit(a, by_element.get(i, []), replacement) for i, a in enumerate(question.alternatives)]
    return dataclasses.replace(question, stem=stem, alternatives=alternatives, spans=[], predictions=[])


def keep_only(question, kept: Sequence[Unit], method: str = DEFAULT_METHOD, mask: str | None = None):
    """A copy of `question` with every word but the `kept` ones taken out (ERASER sufficiency);
    punctuation and the gaps of a cloze stem stay."""
    keep = {(u.alternative, u.start, u.end) for u in kept}
    inside = [u for u in units(question) if not any(k[0] == u.alternative and k[1] <= u.start and u.end <= k[2]
                                                    for k in keep)]
    return occlude(question, inside, method, mask)
