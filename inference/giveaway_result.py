"""What an explanation of the give-away words is (`inference.giveaway` computes it): the units
taken out, each unit's effect, the stored JSON, and the constants both share.

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
# Which words are taken out: all of them (the default: an article can be the give-away,
# "an _" before the one alternative that starts with a vowel), or only content words, which
# leaves out FUNCTION_WORDS: a third fewer sequences to encode (RACE test: 63 → 41 a question at
# the median, 94 → 63 at p95) for a large reader on a small CPU.
ALL, CONTENT = "all", "content"
SCOPES = (ALL, CONTENT)
DEFAULT_SCOPE = ALL
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
VERSION = 1  # of the stored JSON (`Explanation.to_json`)
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
class Explanation:
    """The shortcut prediction of one item and the effect of every unit on it."""

    item_id: str
    model_id: str
    method: str
    probabilities: list[float]
    predicted: int
    n_eff: float
    fingerprint: str  # of the stem and alternatives explained (`fingerprint`)
    words: list[Attribution] = field(default_factory=list)  # every unit, in text order
    model_name: str = ""
    phrase: int = 1  # longest unit, in words
    scope: str = ALL  # which words were taken out: all, or content words only
    seconds: float = 0.0  # time to compute (0 when read back)

    @property
    def variant(self) -> str:
        """What the store keys it by besides item and model: method, scope and phrase length."""
        return variant(self.method, self.scope, self.phrase)

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

    def ranking(self) -> list[Attribution]:
        """Every unit, strongest first (the order the comprehensiveness test removes them in)."""
        return sorted(self.words, key=lambda a: (-a.effect, element_order(a.element), a.start))

    def to_json(self) -> dict:
        return {"version": VERSION, "item_id": self.item_id, "model_id": self.model_id,
                "model_name": self.model_name, "method": self.method, "variant": self.variant, "format": FORMAT,
                "probabilities": [round(float(p), 6) for p in self.probabilities], "predicted": self.predicted,
                "n_eff": round(float(self.n_eff), 6), "fingerprint": self.fingerprint,
                "phrase": self.phrase, "scope": self.scope,
                "words": [a.to_json(EFFECT_DIGITS) for a in self.words]}

    @classmethod
    def from_json(cls, data: dict) -> "Explanation":
        return cls(item_id=str(data["item_id"]), model_id=str(data["model_id"]), method=str(data["method"]),
                   probabilities=[float(p) for p in data["probabilities"]], predicted=int(data["predicted"]),
                   n_eff=float(data["n_eff"]), fingerprint=str(data["fingerprint"]),
                   words=[Attribution(str(w["word"]), str(w["element"]), int(w["start"]), int(w["end"]),
                                      float(w["effect"])) for w in data.get("words", [])],
                   model_name=str(data.get("model_name", "")),
                   phrase=int(data.get("phrase", 1)), scope=str(data.get("scope", ALL)))

    def giveaway_json(self, top: int | None = None) -> str:
        """The export's `giveaway` cell: a JSON list, strongest first."""
        return json.dumps([a.to_json() for a in self.giveaway(top)], ensure_ascii=False)


def element_order(element: str) -> int:
    return -1 if element == STEM else ord(element[0]) - ord("A")


def variant(method: str = DEFAULT_METHOD, scope: str = DEFAULT_SCOPE, phrase: int = 1) -> str:
    """"delete", "mask+content", "delete+phrase2": one explanation of an item per model and variant."""
    parts = [method] + ([scope] if scope != ALL else []) + ([f"phrase{phrase}"] if phrase > 1 else [])
    return "+".join(parts)
