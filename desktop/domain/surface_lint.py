"""A linter for surface problems of an item: suggested problem tags with their span.

Every detection is a `ProblemTag` with origin "model" (a suggestion: the annotator
accepts or dismisses it).  `start`/`end` are offsets into the element's own string:
the passage text for "text", the stem for "question", alternative `alternative` for
"alternatives" (the whole list for between-alternative inconsistencies: no span).

This module runs the rules: the string rules and their words are `surface_rules.py`
(found fast by `surface_scan.py`), the rules over a whole item `surface_item_rules.py`.
"""
from __future__ import annotations

from typing import Iterable

from desktop.domain.model import ProblemTag
from desktop.domain.surface_item_rules import ALT_LEADING_PUNCT, alternatives_rules, stem_rules
from desktop.domain.surface_rules import ALTERNATIVES, DETECTOR, LABEL, QUESTION, TEXT, tag
from desktop.domain.surface_scan import found

__all__ = ["detect", "detect_item", "detect_text", "TEXT", "QUESTION", "ALTERNATIVES", "DETECTOR"]


def _tags(s: str, element: str, alternative: int | None = None, offset: int = 0) -> list[ProblemTag]:
    return [tag(typ, element, alternative, offset + a, offset + b, text) for typ, a, b, text in found(s)]


def detect_text(passage_text: str) -> list[ProblemTag]:
    """Suggestions for the passage (element "text")."""
    return _tags(passage_text, TEXT)


def detect_item(question, passage_text: str = "") -> list[ProblemTag]:
    """Suggestions for the stem (element "question") and the alternatives."""
    tags = _tags(question.stem, QUESTION) + stem_rules(question.stem)
    for i, alt in enumerate(question.alternatives):
        # labels "(A) " are the source's numbering, not the alternative's text
        skip = len(LABEL.match(alt).group()) if LABEL.match(alt) else 0
        for t in _tags(alt[skip:], ALTERNATIVES, i, skip):
            tags.append(t)
        m = ALT_LEADING_PUNCT.match(alt[skip:])
        if m:
            tags.append(tag("punctuation_errors", ALTERNATIVES, i, skip, skip + m.end(), m.group()))
    tags += alternatives_rules(question.alternatives, passage_text + "\n" + question.stem)
    return _dedupe(tags)


def detect(question, passage_text: str | None = None) -> list[ProblemTag]:
    """All suggestions for one item: passage (when given), stem and alternatives."""
    tags = detect_text(passage_text) if passage_text else []
    return _dedupe(tags + detect_item(question, passage_text or ""))


def _dedupe(tags: Iterable[ProblemTag]) -> list[ProblemTag]:
    seen, out = set(), []
    for t in tags:
        k = (t.type, t.element, t.alternative, t.start, t.end)
        if k not in seen:
            seen.add(k)
            out.append(t)
    return out
