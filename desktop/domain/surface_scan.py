"""The surface rules' matches, found faster: the same result as `surface_rules.found_reference`.

Python's regex engine scans quickly only for a pattern that starts with a literal or a
character set; most rules start with a look-behind or a word boundary and are tried at
every position (a report on all of RACE spent a minute here).  Each rule below gets a
cheap "trigger" scan for a character every match must contain, and the rule's own
regex is then tried with `match` only at the positions a match could start from there
(walking back over the letters or digits before the trigger).  Matches are taken in
order without overlap, as `finditer` takes them, so the result is the same as the
reference; tests/test_lint_surface.py checks it on every EMBRACE, ExpMRC and RACE text.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from desktop.domain.surface_rules import (ABBREV, RULES, URL, URL_HINT, keep_match, masked_reference,
                                          raw_rule)

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")


def _run_start(s: str, end: int, chars: frozenset) -> int:
    """Start of the run of `chars` that ends just before `end`."""
    i = end
    while i > 0 and s[i - 1] in chars:
        i -= 1
    return i


def _before_space(s: str, i: int) -> int:
    return i - 1 if i > 0 and s[i - 1] == " " else i


def _word_before(chars=_LETTERS, space: bool = False, least: int = 1):
    """Candidate start: the run of `chars` just before the trigger (after one optional space)."""
    def starts(s: str, t: re.Match):
        q = _before_space(s, t.start()) if space else t.start()
        r = _run_start(s, q, chars)
        if q - r >= least:
            yield r
    return starts


def _at_trigger(s: str, t: re.Match):
    yield t.start()


def _word_start(s: str, t) -> Iterable[int]:
    p = t.start()
    if p == 0 or not (s[p - 1].isalnum() or s[p - 1] == "_"):  # \b before a letter
        yield p


def _notes_starts(s: str, t) -> Iterable[int]:
    yield t.start() - 1 if s[t.start()].isdigit() else t.start()


def _spaces_before(s: str, t: re.Match):
    yield _run_start(s, t.start(), frozenset(" "))


def _scan(rx: re.Pattern, s: str, trigger, starts):
    """`rx.finditer(s)`, trying `rx` only where `starts` says a match can begin
    (`trigger`: one regex or a tuple of them)."""
    triggers = trigger if isinstance(trigger, tuple) else (trigger,)
    cands = sorted({p for tr in triggers for t in tr.finditer(s) for p in starts(s, t)})
    if not cands:
        return
    end = 0
    for p in cands:
        if p < end:
            continue
        m = rx.match(s, p)
        if m:
            end = max(m.end(), p + 1)
            yield m


class _Words:
    """A trigger of literal words found with `str.find` (much faster than a regex
    alternation here); `fold`: case-insensitive, for ASCII strings (others use `rx`)."""

    def __init__(self, words: str, fold: bool = False):
        self.words, self.fold = words.split("|"), fold
        self.rx = re.compile(words, re.I if fold else 0)

    def finditer(self, s: str):
        if self.fold and not s.isascii():
            yield from self.rx.finditer(s)
            return
        low = s.lower() if self.fold else s
        for w in self.words:
            i = low.find(w)
            while i >= 0:
                yield _At(i)
                i = low.find(w, i + 1)


class _At:
    __slots__ = ("pos",)

    def __init__(self, pos: int):
        self.pos = pos

    def start(self) -> int:
        return self.pos


def _ocr_starts(s: str, t: re.Match):
    # after the whole run of digits: a lowercase letter (letters-digits-letters) or one
    # of "lOoI" (digits-letter-digits); nothing else can follow `\d+` in either branch
    after = s[t.end():t.end() + 1]
    r = _run_start(s, t.start(), _LOWER)
    if t.start() - r >= 2 and after in _LOWER:
        yield r
    if after and after in "lOoI":
        yield t.start()


def _r7_starts(s: str, t: re.Match):
    yield t.start() - 1 if s[t.start()] == "(" else t.start()


def _abbrev_starts(s: str, t: re.Match):
    r = t.start()
    while r > 0 and t.start() - r <= 5 and (s[r - 1].isalnum() or s[r - 1] == "_"):
        r -= 1
    if 1 <= t.start() - r <= 5:
        yield r


# rule index in RULES -> (trigger, candidate starts); rules not listed already scan fast
_FAST: dict[int, tuple[re.Pattern, object]] = {
    0: (re.compile(r"[,;:!?](?<= [,;:!?])"), _spaces_before),
    1: (re.compile(r"\.(?<= \.)"), _spaces_before),
    2: (re.compile(r"['’]"), _word_before(space=True)),
    3: (re.compile(r"-"), _word_before(space=True)),
    4: (re.compile(r", \d"), _word_before(_DIGITS)),
    5: (re.compile(r"[,;:!?](?=[A-Za-z])"), _at_trigger),
    6: (tuple(re.compile(x) for x in (r"[.!?,][\"”]", r"\(", r"\)")), _r7_starts),
    7: (re.compile(r"\.(?=[A-Z][a-z])"), _at_trigger),
    8: (re.compile(r"[\"“]"), _at_trigger),
    9: (re.compile(r"(?:Mr|Mrs|Ms|Dr|Prof)\."), _at_trigger),
    10: (_Words("dont|doesnt|didnt|cant|couldnt|wouldnt|shouldnt|isnt|arent|wasnt|werent|hasnt|havent|"
                "hadnt|youre|theyre|im|ive|youve|theyve|itll|youll"), _word_start),
    11: (re.compile(r"[`´,](?:t|s|m|re|ve|ll|d)\b"), _word_before()),
    12: ((_Words("prefix|word", fold=True), re.compile(r"[<&(]"), re.compile(r"\d[tT]")), _notes_starts),
    13: ((re.compile(r"[,;:.!?](?= ?[,;:.!?])"), re.compile(r"\(")), _at_trigger),
    14: (re.compile(r"\d+"), _ocr_starts),
}
_ABBREV_TRIGGER = re.compile(r"\.")
# Characters one of which each rule's trigger needs (None: no such short list); an ASCII
# string without any of them skips the rule (masking writes only "x", which is in none).
_NEEDS: dict[int, str | None] = {
    0: ",;:!?", 1: ".", 2: "'’", 3: "-", 4: ",", 5: ",;:!?", 6: "\"”()", 7: ".", 8: "\"“", 9: ".",
    10: None, 11: "`´,", 12: None, 13: ",;:.!?(", 14: "0123456789",
}
_PLAN = [(typ, rx, group, raw_rule(typ, rx), _FAST[i], None if _NEEDS[i] is None else frozenset(_NEEDS[i]))
         for i, (typ, rx, group) in enumerate(RULES)]
# What the two rules without such a list need: rule 10 one of its words as a whole run of
# letters ("dont"; \b on both sides); rule 12 "<&(" or a digit, "prefix" anywhere, or
# "word"/"words" as a run of letters.
_WORDS10 = frozenset(_FAST[10][0].words)
_NOTES_CHARS = frozenset("<&(0123456789")
_NOTES_WORDS = frozenset(("word", "words"))
_NEEDS_SETS = [plan[5] for plan in _PLAN]
_LETTER_RUN = re.compile(r"[a-z]+")


_HINTS = ("www", "http", "@", ".com", ".org", ".net", ".edu", ".gov", ".cn", ".uk")


def _masked(s: str) -> str:
    """`masked_reference`, with the abbreviations found from their periods."""
    low = s.lower()  # folds at least what re.I folds for these letters
    if any(h in low for h in _HINTS) and URL_HINT.search(s):
        s = URL.sub(lambda m: "x" * len(m.group()), s)
    parts, last = [], 0
    for m in _scan(ABBREV, s, _ABBREV_TRIGGER, _abbrev_starts):
        parts += [s[last:m.start()], "x" * (m.end() - m.start())]
        last = m.end()
    return "".join(parts) + s[last:] if parts else s


_SHORT = 300  # below this length a rule's own finditer is cheaper than the trigger scan


# Sharper necessary conditions for the rules that "." or "," alone would let run on most
# stems and alternatives (checked on the raw string; masking writes only lowercase "x").
_ALSO = {
    0: lambda s: " ," in s or " ;" in s or " :" in s or " !" in s or " ?" in s,
    1: lambda s: " ." in s,
    7: re.compile(r"\.[A-Z]").search,
    9: lambda s: "Mr." in s or "Mrs." in s or "Ms." in s or "Dr." in s or "Prof." in s,
    13: re.compile(r"[,;:.!?] ?[,;:.!?]|\(").search,
}


def _firing(s: str, chars: frozenset) -> list[bool]:
    """Which rules can match the short ASCII string `s` (with characters `chars`)."""
    fire = [needs is None or not chars.isdisjoint(needs) for needs in _NEEDS_SETS]
    low = s.lower()
    tokens = set(_LETTER_RUN.findall(low))
    fire[10] = not _WORDS10.isdisjoint(tokens)
    fire[12] = not chars.isdisjoint(_NOTES_CHARS) or "prefix" in low or not _NOTES_WORDS.isdisjoint(tokens)
    for i, also in _ALSO.items():
        if fire[i] and not also(s):
            fire[i] = False
    return fire


@lru_cache(maxsize=4096)
def found(s: str) -> tuple[tuple[str, int, int, str], ...]:
    """(type, start, end, text) of every rule's match, as `found_reference`; cached because
    a passage is linted once for each of its questions.

    For an ASCII string a rule runs only if a character (or word) its trigger needs is
    there: most stems and alternatives need no rule at all.  Long strings (passages) use
    the trigger scan, short ones the rule's own `finditer`."""
    fire = None
    short = len(s) < _SHORT
    if s.isascii() and short:
        fire = _firing(s, frozenset(s))
        if not any(fire):
            return ()
    elif s.isascii():  # a passage: only the character test (its triggers are cheap scans)
        chars = frozenset(s)
        fire = [plan[5] is None or not chars.isdisjoint(plan[5]) for plan in _PLAN]
    out = []
    masked = None
    for i, (typ, rx, group, raw, (trigger, starts), _) in enumerate(_PLAN):
        if fire is not None and not fire[i]:
            continue
        if not raw and masked is None:
            masked = masked_reference(s) if short else _masked(s)
        src = s if raw else masked
        for m in (rx.finditer(src) if short else _scan(rx, src, trigger, starts)):
            hit = keep_match(typ, m, group, s)
            if hit:
                out.append(hit)
    return tuple(out)
