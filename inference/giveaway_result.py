"""What an explanation of the give-away words is (`inference.giveaway` computes it): the units
taken out, each unit's effect, the words that take the most away together, the stored JSON,
and the constants both share.

Kept apart from the computation so that what the store, the window and the exports read back
(`Explanation.from_json`, `giveaway_json`) does not come with the occlusion machinery.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from desktop.domain.model import index_of, letter
from inference import formatting

STEM = "stem"
MASK, DELETE = "mask", "delete"
METHODS = (DELETE, MASK)
# Deletion ranks the words better by ERASER comprehensiveness (benchmarks/bench_giveaway.py,
# docs/giveaway.md): masking leaves a token the model reads ("[MASK] of the following is
# true"), deletion takes the word's evidence away as the comprehensiveness test itself does.
DEFAULT_METHOD = DELETE
FORMAT = formatting.SHORTCUT
# Which words are taken out one at a time:
# - "all": every word (an article can be the give-away, "an _" before the one alternative that
#   starts with a vowel);
# - "content": content words only (FUNCTION_WORDS are never tried);
# - "screened" (the default): every content word one at a time; the function words of the item
#   first all together, then those of each element together, and one at a time only where
#   their group takes at least SCREEN_MIN and at least as much as the SCREEN_RANK-th strongest
#   word tried alone (below that none of them can be among the strongest words, unless words
#   of one group cancel out).  Every word is tried, alone or in a group, at about the cost of
#   "content" (RACE dev: 22 → 25 sequences a question at the median, all words 32).
ALL, CONTENT, SCREENED = "all", "content", "screened"
SCOPES = (ALL, CONTENT, SCREENED)
DEFAULT_SCOPE = SCREENED
SCREEN_MIN = 0.02
SCREEN_RANK = 3
# The words that take the most away *together*: after the single words, sets of TOGETHER words
# drawn from the TOGETHER + 1 strongest (each set keeps the strongest word) are taken out
# together and the set whose deletion lowers the predicted alternative's probability the most
# is kept with that joint effect (3 more sequences at TOGETHER = 3).  Words that give the key
# away one for another (the same word in the stem and the key) each take little away alone.
DEFAULT_TOGETHER = 3
# Articles other than a/an, prepositions, be and have, personal pronouns: the words of a stem
# that least often say anything about the key.  Negations, quantifiers, modals and absolute
# words ("not", "all", "must", "never") are content words here: they are the give-aways.
FUNCTION_WORDS = frozenset(
    "the of to in on at by for with from into as and or is are was were be been being am it its this that these "
    "those he she they them his her their we our you your i me my him us do does did have has had".split())
# A word moving the predicted alternative's probability by less than this is not listed as a
# give-away: below one point, it is noise of the int8 graph rather than something to fix.
MIN_EFFECT = 0.01
# Occluded copies per `inference.score` call: large enough to fill the batches, small
# enough that progress and cancellation come every few items.
COPIES_PER_CALL = 512
VERSION = 2  # of the stored JSON (`Explanation.to_json`); 2: the screened words and the together set
# Effects are kept to this many decimals from the start, so that an explanation read back from
# the store ranks its words exactly as the one computed (the export shows 4).
EFFECT_DIGITS = 6


def element_name(alternative: int | None) -> str:
    """"stem", or the alternative's letter."""
    return STEM if alternative is None else letter(alternative)


@dataclass(frozen=True)
class Unit:
    """A word (or a phrase of adjacent words) of one element of an item."""

    alternative: int | None  # None: the stem
    start: int
    end: int
    text: str

    @property
    def element(self) -> str:
        return element_name(self.alternative)


@dataclass
class Attribution:
    """One unit and its effect on the predicted alternative's probability."""

    word: str
    element: str
    start: int
    end: int
    effect: float

    def to_json(self, digits: int = 4) -> dict:
        return {"word": self.word, "element": self.element, "start": self.start, "end": self.end,
                "effect": round(float(self.effect), digits)}

    @property
    def alternative(self) -> int | None:
        return None if self.element == STEM else index_of(self.element)


@dataclass
class WordSet:
    """Words taken out together, and their *joint* effect: the drop in the predicted
    alternative's probability when all of them are taken out at once.  An explanation's
    `together` (the set that takes the most away, strongest alone first) and its `screened`
    groups (words only ever taken out with their group: it took too little away for any of them
    to be among the strongest words) are word sets; each word's own effect is in `words`."""

    words: list[Unit]
    effect: float

    def to_json(self, digits: int = EFFECT_DIGITS) -> dict:
        return {"effect": round(float(self.effect), digits),
                "words": [{"word": u.text, "element": u.element, "start": u.start, "end": u.end} for u in self.words]}

    @classmethod
    def from_json(cls, data: dict) -> "WordSet":
        return cls([_unit(w) for w in data.get("words", [])], float(data["effect"]))


def _unit(w: dict) -> Unit:
    return Unit(None if w["element"] == STEM else index_of(w["element"]), int(w["start"]), int(w["end"]), str(w["word"]))


@dataclass
class Explanation:
    """The shortcut prediction of one item and the effect of every unit on it."""

    item_id: str
    model_id: str
    method: str
    probabilities: list[float]
    predicted: int
    n_eff: float
    fingerprint: str  # of the stem and alternatives explained (`fingerprint`)
    words: list[Attribution] = field(default_factory=list)  # every unit taken out alone, in text order
    model_name: str = ""
    phrase: int = 1  # longest unit, in words
    scope: str = ALL  # which words were taken out alone: all, content words only, or screened
    seconds: float = 0.0  # time to compute (0 when read back)
    screened: list[WordSet] = field(default_factory=list)  # words only taken out in a group ("screened")
    together_size: int = 0  # the size of the sets searched for `together` (0: none searched)
    together: WordSet | None = None  # the set that takes the most away together

    @property
    def variant(self) -> str:
        """What the store keys it by besides item and model: method, scope, phrase length and
        the together search."""
        return variant(self.method, self.scope, self.phrase, self.together_size)

    def giveaway(self, top: int | None = None, min_effect: float = MIN_EFFECT) -> list[Attribution]:
        """The give-away words, strongest first: effect ≥ `min_effect`; of overlapping
        phrases and words only the stronger is kept."""
        ranked = sorted(self.words, key=lambda a: (-a.effect, element_order(a.element), a.start))
        out: list[Attribution] = []
        for a in ranked:
            if a.effect < min_effect:
                break
            if any(b.element == a.element and b.start < a.end and a.start < b.end for b in out):
                continue
            out.append(a)
            if top is not None and len(out) >= top:
                break
        return out

    def ranking(self) -> list[Unit]:
        """Every word considered, in the order it gives the key away (the order the
        comprehensiveness test removes them in): the together set first, then the other units
        taken out alone by their effect, then the screened words (their group's effect, then
        text order)."""
        first = list(self.together.words) if self.together is not None else []
        seen = {(u.alternative, u.start, u.end) for u in first}
        alone = [Unit(a.alternative, a.start, a.end, a.word)
                 for a in sorted(self.words, key=lambda a: (-a.effect, element_order(a.element), a.start))]
        rest = [u for g in sorted(self.screened, key=lambda g: -g.effect)
                for u in sorted(g.words, key=lambda u: (element_order(u.element), u.start))]
        return first + [u for u in alone + rest if (u.alternative, u.start, u.end) not in seen]

    def to_json(self) -> dict:
        return {"version": VERSION, "item_id": self.item_id, "model_id": self.model_id,
                "model_name": self.model_name, "method": self.method, "variant": self.variant, "format": FORMAT,
                "probabilities": [round(float(p), 6) for p in self.probabilities], "predicted": self.predicted,
                "n_eff": round(float(self.n_eff), 6), "fingerprint": self.fingerprint,
                "phrase": self.phrase, "scope": self.scope,
                "words": [a.to_json(EFFECT_DIGITS) for a in self.words],
                "screened": [g.to_json() for g in self.screened], "together_size": self.together_size,
                "together": self.together.to_json() if self.together is not None else None}

    @classmethod
    def from_json(cls, data: dict) -> "Explanation":
        return cls(item_id=str(data["item_id"]), model_id=str(data["model_id"]), method=str(data["method"]),
                   probabilities=[float(p) for p in data["probabilities"]], predicted=int(data["predicted"]),
                   n_eff=float(data["n_eff"]), fingerprint=str(data["fingerprint"]),
                   words=[Attribution(str(w["word"]), str(w["element"]), int(w["start"]), int(w["end"]),
                                      float(w["effect"])) for w in data.get("words", [])],
                   model_name=str(data.get("model_name", "")),
                   phrase=int(data.get("phrase", 1)), scope=str(data.get("scope", ALL)),
                   screened=[WordSet.from_json(g) for g in data.get("screened") or []],
                   together_size=int(data.get("together_size", 0)),
                   together=WordSet.from_json(data["together"]) if data.get("together") else None)

    def giveaway_json(self, top: int | None = None) -> str:
        """The export's `giveaway` cell: a JSON list, strongest first."""
        return json.dumps([a.to_json() for a in self.giveaway(top)], ensure_ascii=False)

    def together_json(self) -> str:
        """The export's `together` cell: {"effect": joint effect, "words": [...]}, or empty."""
        return "" if self.together is None else json.dumps(self.together.to_json(4), ensure_ascii=False)


def element_order(element: str) -> int:
    return -1 if element == STEM else ord(element[0]) - ord("A")


def variant(method: str = DEFAULT_METHOD, scope: str = DEFAULT_SCOPE, phrase: int = 1,
            together: int = DEFAULT_TOGETHER) -> str:
    """"delete+screened+together3" (the default), "delete" (every word alone, no together set),
    "mask+content", "delete+phrase2": one explanation of an item per model and variant."""
    parts = ([method] + ([scope] if scope != ALL else []) + ([f"phrase{phrase}"] if phrase > 1 else [])
             + ([f"together{together}"] if together > 1 else []))
    return "+".join(parts)
