"""How `inference.giveaway.explain` takes one item's words out, stage by stage.

A `Search` asks for occluded copies of its item (`copies`), reads back the shortcut scores of
those copies (`take`) and asks for the next stage's, until it has nothing more to ask; the
explainer scores the copies of every item of a call together, one `inference.score` call per
stage.  The stages:

1. the item as stored, and every unit taken out alone (all words; content words only; or, in
   the "screened" scope, content words only and the function words of the whole item together);
2. "screened": where the item's function words together take at least SCREEN_MIN and at least
   as much as the SCREEN_RANK-th strongest word, the function words of each element together;
3. "screened": where an element's function words do the same, each of them alone;
4. the together search: sets of `together` words drawn from the `together` + 1 strongest single
   words, each keeping the strongest, taken out at once; the one whose deletion lowers the
   predicted alternative's probability the most is the explanation's `together` set.

Every number kept is a measured drop in the probability of the alternative predicted on the
intact item: a word's own effect, a group's joint effect, the together set's joint effect.
"""
from __future__ import annotations

import itertools

from inference.giveaway_result import (
    ALL,
    EFFECT_DIGITS,
    FUNCTION_WORDS,
    SCREEN_MIN,
    SCREEN_RANK,
    SCREENED,
    Attribution,
    Unit,
    WordSet,
    element_order,
)
from inference.giveaway_units import occlude, units

BASE, ALONE, GROUP, TOGETHER = "base", "alone", "group", "together"


def _key(u: Unit):
    return (element_order(u.element), u.start, u.end)


class Search:
    """The staged occlusion of one question (see the module's docstring)."""

    def __init__(self, question, phrase: int, scope: str, together: int, method: str, mask: str | None):
        self.question, self.method, self.mask, self.together_size = question, method, mask, together
        pool = units(question, phrase, ALL if scope == SCREENED else scope)
        self.words = set(units(question))  # the single words (the rest of the pool: phrases)
        screened = [u for u in pool if scope == SCREENED and u in self.words and u.text.lower() in FUNCTION_WORDS]
        alone = [u for u in pool if u not in screened] + (screened if len(screened) == 1 else [])
        self.asked: list[tuple[str, list[Unit]]] = [(BASE, [])] + [(ALONE, [u]) for u in alone]
        if len(screened) > 1:
            self.asked.append((GROUP, screened))
        self.expected = len(self.asked)  # copies of the first stage
        self.effects: dict[Unit, float] = {}
        self.screened: list[WordSet] = []
        self.together: WordSet | None = None
        self.scores = None  # the intact item's `FormatScores`
        self.failed = False
        self._together_done = together < 2

    # ---- the stages -------------------------------------------------------------------------
    def copies(self) -> list:
        """The occluded copies this stage asks to be scored (none: finished)."""
        return [self.question if kind == BASE else occlude(self.question, us, self.method, self.mask)
                for kind, us in self.asked]

    def take(self, scores) -> None:
        """The scores of `copies()`, in order; decides the next stage."""
        asked, self.asked = self.asked, []
        if any(s is None for s in scores):  # an item without alternatives (or cancelled)
            self.failed = True
            return
        if asked and asked[0][0] == BASE:
            self.scores = scores[0]
        pred = self.scores.predicted
        p0 = self.scores.probabilities[pred]
        drops = [(kind, us, round(p0 - s.probabilities[pred], EFFECT_DIGITS)) for (kind, us), s in zip(asked, scores)]
        for kind, us, d in drops:
            if kind == ALONE:
                self.effects[us[0]] = d
        for kind, us, d in drops:
            if kind == GROUP:
                self._screen(us, d)
            elif kind == TOGETHER and (self.together is None or d > self.together.effect):
                self.together = WordSet(sorted(us, key=self._rank), d)
        if not self.asked and not self._together_done:
            self._together_done = True
            self._ask_together()

    def _rank(self, u: Unit):
        return (-self.effects[u], _key(u))

    def _bar(self) -> float:
        """What a group must take away for its words to be tried alone."""
        single = sorted((d for u, d in self.effects.items() if u in self.words), reverse=True)
        return max(SCREEN_MIN, single[SCREEN_RANK - 1] if len(single) >= SCREEN_RANK else float("-inf"))

    def _screen(self, group: list[Unit], effect: float) -> None:
        if effect < self._bar():
            self.screened.append(WordSet(sorted(group, key=_key), effect))
            return
        elements: dict = {}
        for u in group:
            elements.setdefault(u.alternative, []).append(u)
        if len(elements) > 1:  # the whole item's: each element's group next
            for us in elements.values():
                self.asked.append((GROUP, us) if len(us) > 1 else (ALONE, us))
        else:  # one element's: each word alone
            self.asked.extend((ALONE, [u]) for u in group)

    def _ask_together(self) -> None:
        k = self.together_size
        top = sorted((u for u in self.effects if u in self.words), key=self._rank)[:k + 1]
        if len(top) < k:
            return
        sets = [top] if len(top) == k else [[top[0], *rest] for rest in itertools.combinations(top[1:], k - 1)]
        self.asked = [(TOGETHER, s) for s in sets]

    # ---- the result -------------------------------------------------------------------------
    def attributions(self) -> list[Attribution]:
        """Every unit taken out alone and its effect, in text order."""
        return [Attribution(u.text, u.element, u.start, u.end, d)
                for u, d in sorted(self.effects.items(), key=lambda kv: _key(kv[0]))]
