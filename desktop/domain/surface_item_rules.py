"""The surface rules over a whole item: a gap glued to a word, a missing comma before "according
to", punctuation before or after the stem, and the alternatives' consistency (the case of
the first word, final punctuation), with the passage and stem as context (a capitalised word
there is a name, not a style)."""
from __future__ import annotations

import re
from functools import lru_cache

from desktop.domain.model import ProblemTag
from desktop.domain.surface_rules import ABBREV, ALTERNATIVES, LABEL, QUESTION, tag

# the item rules' patterns, compiled once (a report lints every stem and alternative)
_GLUED_GAP = re.compile(r"(?<=[A-Za-z,\"])_")
_ACCORDING = re.compile(r"(?<=[A-Za-z_])( +)according to\b")
_LEADING_PUNCT = re.compile(r"^\s*[.,;:]+[\s.]*")
_TRAILING_PUNCT = re.compile(r"(?<=[._?])\s*\.\s+\.\s*$|[\[(]\s*$")
_FIRST_WORD = re.compile(r"[\"“'(]*([A-Za-z][\w'’-]*)")
_CLOSERS = re.compile(r"[\"”')\]]+$")
ALT_LEADING_PUNCT = re.compile(r"^\s*[.,;:]+\s*(?=\w)")


def stem_rules(stem: str) -> list[ProblemTag]:
    out = []
    # a gap glued to the word before it: "that_."
    for m in _GLUED_GAP.finditer(stem):
        out.append(tag("missing_spaces_punctuation", QUESTION, None, m.start(), m.end(), stem[m.start() - 1:m.end()]))
    # "Which is true according to the passage?": EMBRACE's annotators mark the missing comma
    # before a final "according to ..." every time (and no stem of the green file has one)
    for m in _ACCORDING.finditer(stem):
        out.append(tag("punctuation_errors", QUESTION, None, m.start(1), m.end(1), stem[m.start(1):m.end() ]))
    # punctuation before the stem starts (".The above passage", ".  . Which") or after its end
    m = _LEADING_PUNCT.match(stem)
    if m:
        out.append(tag("punctuation_errors", QUESTION, None, m.start(), m.end(), m.group()))
    m = _TRAILING_PUNCT.search(stem)
    if m:
        out.append(tag("punctuation_errors", QUESTION, None, m.start(), m.end(), m.group()))
    return out


def _first_word(alt: str) -> str:
    m = _FIRST_WORD.match(LABEL.sub("", alt))
    return m.group(1) if m else ""


def _capitalised_elsewhere(word: str, context: str) -> bool:
    """A capitalised word inside a sentence of the context is a name, not a style choice."""
    return _word_pattern(rf"(?<=[a-z,;] ){re.escape(word)}\b").search(context) is not None


@lru_cache(maxsize=65536)
def _word_pattern(pattern: str) -> re.Pattern:
    """Compiled once per word: `re`'s own cache (512 patterns) thrashes over a corpus."""
    return re.compile(pattern)


def alternatives_rules(alts: list[str], context: str) -> list[ProblemTag]:
    out: list[ProblemTag] = []
    bodies = [LABEL.sub("", a).strip() for a in alts]
    if len(bodies) < 2 or any(not b for b in bodies):
        return out
    # capitalisation of the first word
    words = [_first_word(a) for a in alts]
    case = [w[:1].isupper() if w else None for w in words]
    known = [c for c in case if c is not None]
    if known and 0 < sum(known) < len(known):
        upper_minority = sum(known) * 2 < len(known)
        odd = [i for i, c in enumerate(case) if c is not None and c == upper_minority]
        if upper_minority:
            # an uppercase first word is fine when it is a name ("Japan", "Tom's", "I")
            odd = [i for i in odd if words[i] != "I" and not _capitalised_elsewhere(words[i], context)
                   and not any(ch.isupper() for ch in words[i][1:])
                   and not words[i].isupper()
                   and _word_pattern(rf"\b{re.escape(words[i].lower())}\b").search(context) is not None]
        elif sum(1 for c in known if not c) * 2 == len(known):
            odd = []  # an even split says nothing about which is the rule
        elif all(_capitalised_elsewhere(w, context) or w.isupper() for w, c in zip(words, case) if c):
            odd = []  # the capitalised ones are names ("Charlie Kemp ..."), the lowercase one is the style
        odd = [i for i in odd if not any(ch.isupper() for ch in words[i][1:])]  # "eBay", "iPhone"
        for i in odd:
            start = alts[i].find(words[i])
            out.append(tag("formatting_inconsistency", ALTERNATIVES, i, start, start + len(words[i]), words[i]))
    # final punctuation
    ends = []
    for b in bodies:
        core = _CLOSERS.sub("", b)
        if ABBREV.search(core[-6:]) and core.endswith("."):
            ends.append(None)  # "10 p.m." ends with an abbreviation's period
        else:
            ends.append(core[-1:] in ".!?")
    known_e = [e for e in ends if e is not None]
    if known_e and 0 < sum(known_e) < len(known_e):
        minority = sum(known_e) * 2 < len(known_e)
        if sum(known_e) * 2 != len(known_e):
            for i, e in enumerate(ends):
                if e is minority:
                    n = len(alts[i].rstrip())
                    out.append(tag("formatting_inconsistency", ALTERNATIVES, i, max(0, n - 1), n, alts[i][-12:]))
        else:
            out.append(tag("formatting_inconsistency", ALTERNATIVES, None, None, None, "final punctuation"))
    return out
