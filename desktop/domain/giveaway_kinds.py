"""Kinds of give-away an item writer knows, found in an item's own text.

The shortcut model (Q+{O}, no passage) answers some items with N < 2: they can be answered
without reading.  Item-writing guides name the usual reasons; each kind here is one of them,
detected on the stem and alternatives as stored, relative to the alternative the shortcut
model picks (usually the key):

* ``stem_key_overlap``: the picked alternative repeats a content word of the stem (or a form
  of it: "protect" / "protection" share their first five letters);
* ``absolute_distractors``: a distractor says "always", "never", "all", "only", ... and the
  picked alternative says nothing absolute (test-wise readers drop absolute distractors);
* ``longest``: the picked alternative is the longest, by a fifth more characters than the next;
* ``negation``: the stem asks with a negation ("Which is NOT true?", "EXCEPT"), or only the picked
  alternative carries one;
* ``numbers_dates``: the picked alternative carries a number, a year, a month or a day.

`find(stem, alternatives, picked)` returns a `Cue` per kind present, with the words (element,
start, end) that carry it — offsets into the element's text, like the give-away words of
`inference.giveaway`, so the report can say whether the model's give-away words are these.

Each kind also names the EMBRACE error types (desktop.domain.typology) that say the same
thing of an item, so that the report can count how often the recorded tags (and the surface
linter's suggestions) agree: every kind with "answerable without reading"; the longest
alternative also with the inconsistency and formatting types between alternatives (a meta-clue,
Appendix B); absolute distractors with the inconsistency between alternatives; numbers and
dates with "time-dependent".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

STEM = "stem"
LETTERS = "ABCDEFGHIJ"

STEM_KEY_OVERLAP = "stem_key_overlap"
ABSOLUTE_DISTRACTORS = "absolute_distractors"
LONGEST = "longest"
NEGATION = "negation"
NUMBERS_DATES = "numbers_dates"
KINDS = (STEM_KEY_OVERLAP, ABSOLUTE_DISTRACTORS, LONGEST, NEGATION, NUMBERS_DATES)

NAMES = {
    STEM_KEY_OVERLAP: "Stem–key word overlap",
    ABSOLUTE_DISTRACTORS: "Absolute words in distractors",
    LONGEST: "The longest alternative",
    NEGATION: "Negation",
    NUMBERS_DATES: "Number and date cues",
}
DESCRIPTIONS = {
    STEM_KEY_OVERLAP: "the picked alternative repeats a content word of the stem (or a form of it)",
    ABSOLUTE_DISTRACTORS: "a distractor says always, never, all, only… and the picked alternative nothing absolute",
    LONGEST: "the picked alternative is the longest, by a fifth more characters than the next",
    NEGATION: "the stem asks with a negation (NOT, EXCEPT), or only the picked alternative has one",
    NUMBERS_DATES: "the picked alternative carries a number, a year, a month or a day",
}
ANSWERABLE = "answerable_without_reading"
# the EMBRACE types that say the same of an item (desktop.domain.typology keys)
RELATED_TYPES = {
    STEM_KEY_OVERLAP: (ANSWERABLE,),
    ABSOLUTE_DISTRACTORS: (ANSWERABLE, "inconsistency_between_alternatives"),
    LONGEST: (ANSWERABLE, "inconsistency_between_alternatives", "formatting_inconsistency"),
    NEGATION: (ANSWERABLE,),
    NUMBERS_DATES: (ANSWERABLE, "time_dependent"),
}

_WORD = re.compile(r"[^\W_]+(?:(?:[-‐‑'’]|(?<=\d)[.,](?=\d))[^\W_]+)*")
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves passage text according following
true false best author writer story article mainly mostly can't don't doesn't didn't isn't aren't wasn't
""".split())
ABSOLUTE = frozenset("""
always never all none every everyone everybody everything everywhere nobody nothing nowhere only must completely
entirely totally absolutely forever certainly definitely undoubtedly impossible whole
""".split())
NEGATIONS = frozenset("not no never nothing nobody none neither nor except without cannot".split())
_NT = re.compile(r"n[’']t$", re.I)
MONTHS = frozenset("""january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday""".split())
NUMBER_WORDS = frozenset("""zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
million billion half quarter twice dozen first second third fourth fifth percent""".split())
LONGER_BY = 1.2  # "the longest": this many times the characters of the next longest
STEM_LETTERS = 5  # words sharing their first five letters (or equal when shorter) are forms of one word

FLAGGED_N = 2.0  # an item the shortcut model answers with N below this is "answerable without the passage"


@dataclass
class Cue:
    """One kind of give-away in an item, and the words that carry it (element, start, end)."""

    kind: str
    words: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return NAMES[self.kind]


def words(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text or "")]


def _form(word: str) -> str:
    w = word.lower().replace("’", "'")
    return w[:STEM_LETTERS]


def _content(word: str) -> bool:
    w = word.lower().replace("’", "'")
    return len(w) >= 3 and w not in STOPWORDS and not w.isdigit()


def _negation(word: str) -> bool:
    return word.lower() in NEGATIONS or bool(_NT.search(word))


def _number_or_date(word: str) -> bool:
    w = word.lower()
    return any(c.isdigit() for c in w) or w in MONTHS or w in NUMBER_WORDS


def find(stem: str, alternatives: list[str], picked: int | None) -> list[Cue]:
    """The kinds of give-away present in the item, for the alternative `picked` (0-based)."""
    if picked is None or not 0 <= picked < len(alternatives):
        return []
    out: list[Cue] = []
    key = alternatives[picked]
    letter = LETTERS[picked]
    stem_words = words(stem)
    key_words = words(key)
    others = [(LETTERS[i], a) for i, a in enumerate(alternatives) if i != picked]

    forms = {_form(w) for _, _, w in stem_words if _content(w)}
    shared = [(letter, s, e) for s, e, w in key_words if _content(w) and _form(w) in forms]
    if shared:
        shared_forms = {_form(key[s:e]) for _, s, e in shared}
        shared += [(STEM, s, e) for s, e, w in stem_words if _content(w) and _form(w) in shared_forms]
        out.append(Cue(STEM_KEY_OVERLAP, shared))

    if not any(w.lower() in ABSOLUTE for _, _, w in key_words):
        absolute = [(el, s, e) for el, a in others for s, e, w in words(a) if w.lower() in ABSOLUTE]
        if absolute:
            out.append(Cue(ABSOLUTE_DISTRACTORS, absolute))

    lengths = sorted((len(a.strip()) for _, a in others), reverse=True)
    if lengths and len(key.strip()) >= LONGER_BY * max(lengths[0], 1):
        out.append(Cue(LONGEST, [(letter, s, e) for s, e, _ in key_words]))

    in_stem = [(STEM, s, e) for s, e, w in stem_words if _negation(w)]
    in_key = [(letter, s, e) for s, e, w in key_words if _negation(w)]
    in_others = any(_negation(w) for _, a in others for _, _, w in words(a))
    if in_stem or (in_key and not in_others):
        out.append(Cue(NEGATION, in_stem + (in_key if not in_others else [])))

    numbers = [(letter, s, e) for s, e, w in key_words if _number_or_date(w)]
    if numbers:
        out.append(Cue(NUMBERS_DATES, numbers))
    return out


def confirmed(cue: Cue, giveaway: list[dict], top: int = 5) -> bool | None:
    """Whether the model's `top` give-away words (dicts with element, start, end; strongest
    first) include a word that carries the cue; None where a kind has no words of its own to
    compare (the longest alternative: its length, not a word, is the cue)."""
    if cue.kind == LONGEST:
        return None
    mine = {(el, s, e) for el, s, e in cue.words}
    for g in giveaway[:top]:
        for el, s, e in mine:
            if g["element"] == el and g["start"] < e and s < g["end"]:
                return True
    return False
