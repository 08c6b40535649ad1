"""The vocabulary of the field as plain data: passage, question (stem), alternatives, key, spans.

One object describes one item everywhere: the same `Question` is read from a file,
stored, shown, scored and written back.  No I/O, no Qt, no SQL here.

Conventions every package relies on:

* Offsets (`Span.start`, `Span.end`) are Python string indices into `Passage.text`
  exactly as stored; the passage text is never edited after import.
* `Question.key` is a 0-based index into `Question.alternatives` (None = no key).
* `Question.id` is the source id: the EMBRACE question id ("0_0"), or
  "<passage id>-<question index>" for RACE and ExpMRC (the ExpMRC scorer's convention).
* `extra` dictionaries hold every original value of the source record that the
  domain does not model, so that a writer can restore the record exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Span roles
EVIDENCE = "evidence"
BASIS = "basis"  # basis of one alternative: Span.alternative says which
REQUIRED = "required"  # required paragraphs
ROLES = (EVIDENCE, BASIS, REQUIRED)

# Where a span came from
IMPORTED = "imported"
HUMAN = "human"
MODEL = "model"
MODEL_ACCEPTED = "model-accepted"
ORIGINS = (IMPORTED, HUMAN, MODEL, MODEL_ACCEPTED)

# Answerability labels (None-of-the-above seed, QuAIL)
ANSWERABLE = "answerable"
UNANSWERABLE = "unanswerable"
UNSURE = "unsure"
ANSWERABILITY = (ANSWERABLE, UNANSWERABLE, UNSURE)

# Sources (formats) a question can come from
SOURCES = ("race", "embrace", "expmrc", "dream", "quail", "cosmosqa", "demo")

LETTERS = "ABCDEFGHIJ"

DEFAULT_ANNOTATOR = "imported"


def letter(index: int) -> str:
    """Alternative label for a 0-based index: 0 -> 'A'."""
    return LETTERS[index]


def index_of(letter_: str) -> int:
    """0-based index for an alternative label: 'A' -> 0."""
    return LETTERS.index(letter_.strip().upper())


@dataclass
class Span:
    """A marked stretch of the passage: evidence, the basis of one alternative, or required paragraphs."""

    start: int
    end: int
    role: str = EVIDENCE
    alternative: int | None = None  # 0-based, only for BASIS
    annotator: str = DEFAULT_ANNOTATOR
    origin: str = IMPORTED
    extra: dict[str, Any] = field(default_factory=dict)
    id: int | None = None  # store row id once stored

    def text(self, passage_text: str) -> str:
        return passage_text[self.start:self.end]


@dataclass
class ProblemTag:
    """One problem of the EMBRACE error typology on one element of the item.

    `type` is a key of `desktop.domain.typology` (e.g. "extra_spaces_punctuation");
    `element` is one of text, question, alternatives, question-text, text-alternatives,
    question-alternatives, between-alternatives.  `span` optionally locates it.
    """

    type: str
    element: str
    annotator: str = DEFAULT_ANNOTATOR
    origin: str = IMPORTED
    note: str = ""
    alternative: int | None = None
    start: int | None = None
    end: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    id: int | None = None


@dataclass
class Assessment:
    """One annotator's difficulty assessment on the adapted Kirsch–Mosenthal scale.

    `values` maps a variable name (toi, tom, nphr, ni, nit, npar, ic, pod, toc) to its
    category key as defined in `desktop.domain.difficulty`; TOM's value is a pair
    [t_q, t_a].  Missing variables are simply absent.  Text format and MCQ unit type
    are recorded here too (they decide eligibility).
    """

    values: dict[str, Any] = field(default_factory=dict)
    annotator: str = DEFAULT_ANNOTATOR
    text_format: str | None = None  # continuous, partly continuous, non-continuous, mixed
    multiple_texts: bool | None = None  # single- or multiple-member text
    unit_type: str | None = None  # content, structure, vocabulary
    extra: dict[str, Any] = field(default_factory=dict)
    origin: str = IMPORTED  # imported from a file, or a person's (HUMAN): the bottom layer is the imported one


@dataclass
class Prediction:
    """A model's output for one question in one input format."""

    model_id: str
    input_format: str  # standard, shortcut, options, options_context
    probabilities: list[float]
    evidence: str | None = None  # predicted evidence text, when the model gives one
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Question:
    """A multiple-choice item: stem, alternatives, key, and its annotations."""

    id: str
    passage_id: str
    index: int  # position of the question within its passage (0-based)
    stem: str
    alternatives: list[str]
    key: int | None
    source: str = "race"
    spans: list[Span] = field(default_factory=list)
    assessments: list[Assessment] = field(default_factory=list)
    problems: list[ProblemTag] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    answerability: str | None = None
    unanswerable_alternatives: list[int] = field(default_factory=list)  # e.g. QuAIL "not enough information"
    predictions: list[Prediction] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_cloze(self) -> bool:
        """A cloze stem has a gap ("_") that the alternative fills."""
        return "_" in self.stem

    def spans_with(self, role: str, alternative: int | None = None) -> list[Span]:
        return [s for s in self.spans if s.role == role and (alternative is None or s.alternative == alternative)]

    @property
    def distractors(self) -> list[int]:
        return [i for i in range(len(self.alternatives)) if i != self.key]


@dataclass
class Passage:
    """A reading passage (or dialogue joined into one text) and its questions."""

    id: str
    text: str
    source: str = "race"
    questions: list[Question] = field(default_factory=list)
    split: str | None = None  # train, dev, test, ...
    level: str | None = None  # e.g. RACE middle/high
    extra: dict[str, Any] = field(default_factory=dict)

    def paragraphs(self) -> list[tuple[int, int]]:
        """(start, end) offsets of the paragraphs, split on newlines as in the source."""
        out, pos = [], 0
        for line in self.text.split("\n"):
            out.append((pos, pos + len(line)))
            pos += len(line) + 1
        return out


@dataclass
class Dataset:
    """What one file holds: passages plus file-level values a writer needs back."""

    source: str
    passages: list[Passage] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def questions(self):
        for p in self.passages:
            yield from p.questions
