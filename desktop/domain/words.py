"""Counts in words: "1 item", "2 items", "1 pt", "2.5 pts" — the one place that decides the plural.

Every count the window, the command line and the reports print goes through `count`,
so none of them says "1 items" or "2 predictions of 1 questions" again.
"""
from __future__ import annotations

# the few nouns of the product whose plural is not noun + "s"
_IRREGULAR = {"match": "matches", "evidence": "evidence", "basis": "bases", "replica": "replicas",
              "analysis": "analyses", "person": "people", "child": "children", "index": "indices"}


def plural(noun: str) -> str:
    """The plural of `noun` (the last word of a phrase: "pair of annotators" stays as it is)."""
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    head, sep, tail = noun.partition(" ")
    if sep and tail.split(" ", 1)[0] in ("of", "with", "from", "in", "on", "by", "to"):
        return plural(head) + sep + tail  # "pair of annotators" -> "pairs of annotators"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def count(n: float, noun: str, many: str | None = None) -> str:
    """`n` and the noun in the right number: count(1, "item") == "1 item", count(2, "item") == "2 items",
    count(0, "item") == "0 items"; `many` gives the plural where `plural` would not."""
    one = n == 1
    number = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{number} {noun if one else (many or plural(noun))}"


def points(p: float) -> str:
    """Points on the difficulty scale: "1 pt", "0 pts", "2.5 pts"."""
    return f"{p:g} pt" + ("" if p == 1 else "s")
