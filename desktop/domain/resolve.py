"""One item as the window shows it, and so as every export writes it: the annotators'
layers laid on each other.  `item` is the one function that does it; the window's item
view and navigator facts, the EMBRACE, ExpMRC and CSV writers, the corpus report and
`merge` (which keeps layers side by side and writes them back through these writers)
all go through it.

Layers, from the bottom up:

1. what was imported (origin "imported": the file's own annotations), in stored order;
2. every other annotator who edited the item, in the order they first did (stored order);
3. `on_top`: the window's annotator; `export --annotator NAME`; a default export's
   adjudicated `gold` layer where it exists.

A layer replaces what lies beneath it only where it says something, field by field:
one difficulty variable, the text format, the unit type, multiple texts; for spans, the
basis of one alternative and the required paragraphs (the topmost person's, never an
unaccepted model suggestion).  So an annotator who corrects NI on an imported EMBRACE
item shows and exports NI corrected and the eight other imported values as they were.
Evidence, problem tags and comments are lists: every layer's entries are shown and
written (a tag is one row for everyone: removing it removes it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from desktop.domain import difficulty as km
from desktop.domain.model import BASIS, EVIDENCE, IMPORTED, MODEL, REQUIRED, Assessment, ProblemTag, Question, Span

SCALARS = ("text_format", "multiple_texts", "unit_type")


@dataclass
class Shown:
    """What one item says once its layers are resolved."""

    values: dict[str, Any] = field(default_factory=dict)  # difficulty variable -> category
    text_format: str | None = None
    multiple_texts: bool | None = None
    unit_type: str | None = None
    by: dict[str, str] = field(default_factory=dict)  # variable or scalar -> annotator whose layer gives it
    layers: list[str] = field(default_factory=list)  # annotators with an assessment, bottom to top
    raw_difficulty: dict | None = None  # the imported EMBRACE difficulty record beneath every layer
    bases: dict[int, Span] = field(default_factory=dict)  # alternative -> its basis on top
    required: Span | None = None  # the required paragraphs on top (a format that holds one)
    required_spans: list[Span] = field(default_factory=list)  # every layer's, as the passage shows them
    evidence: list[Span] = field(default_factory=list)
    problems: list[ProblemTag] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    @property
    def assessed(self) -> bool:
        return bool(self.layers)

    @property
    def total(self) -> float | None:
        """The Kirsch–Mosenthal total of the values (None while incomplete or unknown)."""
        try:
            return km.total(self.values) if self.values else None
        except ValueError:
            return None

    def inherited(self, annotator: str | None) -> set[str]:
        """Variables shown from another annotator's layer than `annotator`'s own."""
        return {var for var in self.values if self.by.get(var) != annotator}


def stack(assessments: Iterable[Assessment], on_top: str | None = None) -> list[Assessment]:
    """The assessments bottom to top: imported ones, the others, then `on_top`'s (stable)."""
    items = list(assessments)

    def rank(a: Assessment) -> int:
        if on_top is not None and a.annotator == on_top:
            return 2
        return 0 if a.origin == IMPORTED else 1

    return sorted(items, key=rank)


def assessment(assessments: Sequence[Assessment], on_top: str | None = None, into: Shown | None = None) -> Shown:
    """The difficulty values and scalars of the layers of `assessments` (see the module)."""
    out = into if into is not None else Shown()
    for a in stack(assessments, on_top):
        out.layers.append(a.annotator)
        if out.raw_difficulty is None and isinstance(a.extra.get("embrace_difficulty"), dict):
            out.raw_difficulty = a.extra["embrace_difficulty"]
        for var, value in a.values.items():
            if value is not None:
                out.values[var] = value
                out.by[var] = a.annotator
        for name in SCALARS:
            value = getattr(a, name)
            if value is not None:
                setattr(out, name, value)
                out.by[name] = a.annotator
    return out


def pick(candidates: Sequence[Any], on_top: str | None = None) -> Any:
    """The one span (or tag) of a kind that lies on top: `on_top`'s own latest; else the latest
    a person made or accepted; else the latest imported.  Unaccepted model suggestions never."""
    candidates = [c for c in candidates if getattr(c, "origin", IMPORTED) != MODEL]
    if not candidates:
        return None
    if on_top:
        own = [c for c in candidates if c.annotator == on_top]
        if own:
            return own[-1]
    edited = [c for c in candidates if getattr(c, "origin", IMPORTED) != IMPORTED]
    return (edited or candidates)[-1]


def item(q: Question, on_top: str | None = None) -> Shown:
    """`q` as the window shows it to `on_top` (and as exports write it): see the module.

    `q` holds the layers to resolve: the window loads the imported ones and its
    annotator's; an export loads everyone's, or the imported ones and NAME's."""
    out = assessment(q.assessments, on_top)
    for i in range(len(q.alternatives)):
        span = pick(q.spans_with(BASIS, i), on_top)
        if span is not None:
            out.bases[i] = span
    out.required = pick(q.spans_with(REQUIRED), on_top)
    out.required_spans = [s for s in q.spans_with(REQUIRED) if s.origin != MODEL]
    out.evidence = [s for s in q.spans_with(EVIDENCE) if s.origin != MODEL]
    out.problems = list(q.problems)
    out.comments = list(q.comments)
    return out
