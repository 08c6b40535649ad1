"""The "None of the above" (NOTA) transformation and the answerability metrics.

From the None-of-the-above seed (Reyes Montesinos, chapters 3–4).  For a proportion
C, inside each group of questions (split × difficulty level, or the source when a
passage has neither) round(C × N) questions are chosen at random and their key is
replaced by the NOTA text, which becomes the key: they are now *unanswerable*.  In
every other question one distractor chosen at random is replaced by the NOTA text
and the key stays: they remain *answerable*.  Every question therefore carries
exactly one NOTA alternative.

Rounding: round(C × N) is taken half-up on the decimal value of C (0.1 × 5 = 0.5
→ 1, 0.5 × 3 = 1.5 → 2).  Python's round() rounds half to even and works on the
binary float, so 0.5 × 5 would give 2 and 0.1 × 5 would give 0; half-up is what a
reader of "round(C × N)" expects and is the same on every platform.

Reproducibility: each (seed, replica, group) has its own `random.Random`, seeded
with a string (hashed with SHA-512 by the standard library), so the same seed gives
the same output on every run and adding a group never changes the others.

Metrics (unanswerable is the positive class, as in the seed):

=======================  ==================================================
general_accuracy         (unanswerable chose NOTA + answerable chose key) / N
answerable_accuracy      answerable chose key / answerable
recall                   unanswerable chose NOTA / unanswerable
specificity              answerable chose other than NOTA / answerable
answerability_accuracy   (TP + TN) / N
nota_proportion          chose NOTA / N
youden_j                 recall + specificity − 1
=======================  ==================================================

A metric whose denominator is zero is undefined and is None, never 0.
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Iterable, Sequence

from desktop.domain.errors import InputError
from desktop.domain.model import ANSWERABLE, BASIS, UNANSWERABLE, Passage, Question

NOTA_TEXT = "None of the answers are correct."

ACCURACY, ANSWERABILITY = "accuracy", "answerability"

# (name, label, family): the order of columns, tables and heatmaps.
METRICS: tuple[tuple[str, str, str], ...] = (
    ("general_accuracy", "General accuracy", ACCURACY),
    ("answerable_accuracy", "Accuracy on answerable questions", ACCURACY),
    ("recall", "Recall on unanswerable questions", ANSWERABILITY),
    ("specificity", "Specificity (answerable kept answerable)", ANSWERABILITY),
    ("answerability_accuracy", "Answerability accuracy", ANSWERABILITY),
    ("nota_proportion", "Proportion of NOTA choices", ANSWERABILITY),
    ("youden_j", "Youden's J", ANSWERABILITY),
)
METRIC_NAMES = tuple(m[0] for m in METRICS)


# ---------------------------------------------------------------- transform

def replaced_count(c: float | str | Decimal, n: int) -> int:
    """round(C × N), half-up on the decimal value of C (see the module docstring)."""
    dc = Decimal(str(c))
    if not Decimal(0) <= dc <= Decimal(1):
        raise ValueError(f"the proportion C must be between 0 and 1, not {c}")
    return int((dc * n).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def is_training_split(split: str | None) -> bool:
    """Training data gets one copy; every other split (test, dev, none) gets replicas."""
    return bool(split) and split.lower().startswith("train")


def group_key(passage: Passage) -> tuple[str, ...]:
    """The group C is applied in: split × difficulty level, or the source when there is neither."""
    if passage.split or passage.level:
        return ("split", passage.split or "", "level", passage.level or "")
    return ("source", passage.source)


@dataclass(frozen=True)
class NotaChange:
    """What the transform did to one question."""

    question_id: str
    answerable: bool
    replaced: int  # 0-based index of the alternative now holding the NOTA text
    original: str  # the text it replaced
    key: int  # the key after the transform


def _choices(questions: Sequence[Question], c, rng: random.Random, text: str) -> list[tuple[bool, int]]:
    """(answerable, replaced index) for each question of one group, in order."""
    n = len(questions)
    unanswerable = set(rng.sample(range(n), replaced_count(c, n)))
    out = []
    for i, q in enumerate(questions):
        if q.key is None:
            raise InputError(q.source, q.id, "key", "the question has no key; the NOTA transform needs one")
        if q.unanswerable_alternatives:
            # a second "no answer" alternative would break "exactly one NOTA alternative"
            raise InputError(q.source, q.id, "alternatives",
                             f"already has an unanswerable alternative ({q.alternatives[q.unanswerable_alternatives[0]]!r}); "
                             "the NOTA transform is for items whose questions are all answerable")
        if any(a.strip().lower() == text.strip().lower() for a in q.alternatives):
            raise InputError(q.source, q.id, "alternatives",
                             f"already has the NOTA alternative {text!r} (transformed before?)")
        if i in unanswerable:
            out.append((False, q.key))
            continue
        distractors = q.distractors
        if not distractors:
            raise InputError(q.source, q.id, "alternatives", "no distractor to replace by the NOTA text")
        out.append((True, rng.choice(distractors)))
    return out


def _transformed_question(q: Question, answerable: bool, replaced: int, text: str, meta: dict) -> Question:
    new = copy.deepcopy(q)
    original = new.alternatives[replaced]
    new.alternatives[replaced] = text
    new.key = q.key if answerable else replaced
    new.answerability = ANSWERABLE if answerable else UNANSWERABLE
    new.unanswerable_alternatives = [replaced]
    # the basis of the replaced alternative no longer belongs to anything; model outputs were for other alternatives
    new.spans = [s for s in new.spans if not (s.role == BASIS and s.alternative == replaced)]
    new.predictions = []
    new.extra["nota"] = dict(meta, answerable=answerable, replaced=replaced, original=original,
                             original_key=q.key)
    return new


def plan(passages: Sequence[Passage], c: float | str, seed: int | str, replica: int = 1,
         text: str = NOTA_TEXT) -> list[NotaChange]:
    """What the transform does to each question, in passage order, without copying anything.

    The grid of `nota eval` needs only this; `transform` applies it to copies."""
    replaced_count(c, 0)  # validates C early, also for empty input
    groups: dict[tuple[str, ...], list[Question]] = {}
    for p in passages:
        groups.setdefault(group_key(p), []).extend(sorted(p.questions, key=lambda q: q.index))
    decided: dict[int, tuple[bool, int]] = {}
    for gkey, qs in groups.items():
        rng = random.Random(f"nota|{seed}|{replica}|{'|'.join(gkey)}")
        for q, choice in zip(qs, _choices(qs, c, rng, text)):
            decided[id(q)] = choice
    changes = []
    for p in passages:
        for q in p.questions:
            answerable, replaced = decided[id(q)]
            changes.append(NotaChange(q.id, answerable, replaced, q.alternatives[replaced],
                                      q.key if answerable else replaced))
    return changes


def transform(passages: Sequence[Passage], c: float | str, seed: int | str, replica: int = 1,
              text: str = NOTA_TEXT) -> tuple[list[Passage], list[NotaChange]]:
    """One transformed copy of `passages` (inputs untouched) and what changed, question by question."""
    changes = plan(passages, c, seed, replica, text)
    meta = {"c": float(c), "seed": seed, "replica": replica, "text": text}
    out, it = [], iter(changes)
    for p in passages:
        newp = copy.copy(p)
        newp.extra = copy.deepcopy(p.extra)
        newp.questions = [_transformed_question(q, ch.answerable, ch.replaced, text, meta)
                          for q, ch in zip(p.questions, it)]
        out.append(newp)
    return out, changes


def transform_replicas(passages: Sequence[Passage], c: float | str, seed: int | str, replicas: int = 1,
                       text: str = NOTA_TEXT) -> list[list[Passage]]:
    """`replicas` differently seeded copies; training passages appear in the first copy only."""
    if replicas < 1:
        raise ValueError("replicas must be at least 1")
    train = [p for p in passages if is_training_split(p.split)]
    held_out = [p for p in passages if not is_training_split(p.split)]
    copies = []
    for r in range(1, replicas + 1):
        part = transform(train, c, seed, 1, text)[0] if r == 1 else []
        copies.append(part + transform(held_out, c, seed, r, text)[0])
    return copies


# ---------------------------------------------------------------- metrics

@dataclass
class Confusion:
    """Counts of (answerable?, chose NOTA?), with answerable questions split by correctness."""

    true_nota: int = 0  # unanswerable, chose NOTA (true positive)
    missed_nota: int = 0  # unanswerable, chose another alternative (false negative)
    false_nota: int = 0  # answerable, chose NOTA (false positive)
    correct: int = 0  # answerable, chose the key (true negative, right answer)
    wrong: int = 0  # answerable, chose another distractor (true negative, wrong answer)

    def add(self, answerable: bool, predicted: int, key: int, nota: int | Iterable[int]) -> None:
        """Count one prediction; `nota` is the index (or indices) of the NOTA alternative(s)."""
        nota_set = {nota} if isinstance(nota, int) else set(nota)
        chose_nota = predicted in nota_set
        if not answerable:
            if chose_nota:
                self.true_nota += 1
            else:
                self.missed_nota += 1
        elif chose_nota:
            self.false_nota += 1
        elif predicted == key:
            self.correct += 1
        else:
            self.wrong += 1

    @property
    def n(self) -> int:
        return self.true_nota + self.missed_nota + self.false_nota + self.correct + self.wrong

    @property
    def unanswerable(self) -> int:
        return self.true_nota + self.missed_nota

    @property
    def answerable(self) -> int:
        return self.false_nota + self.correct + self.wrong


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def metrics(conf: Confusion) -> dict[str, float | None]:
    """The seven metrics of the seed; None where the denominator is zero."""
    tn = conf.correct + conf.wrong
    recall = _ratio(conf.true_nota, conf.unanswerable)
    specificity = _ratio(tn, conf.answerable)
    return {
        "general_accuracy": _ratio(conf.true_nota + conf.correct, conf.n),
        "answerable_accuracy": _ratio(conf.correct, conf.answerable),
        "recall": recall,
        "specificity": specificity,
        "answerability_accuracy": _ratio(conf.true_nota + tn, conf.n),
        "nota_proportion": _ratio(conf.true_nota + conf.false_nota, conf.n),
        "youden_j": None if recall is None or specificity is None else recall + specificity - 1,
    }


def mean_defined(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values; None when none is defined (undefined is not zero)."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def mean_metrics(rows: Sequence[dict[str, float | None]]) -> dict[str, float | None]:
    """Per-metric mean over replicas, as the seed averages its 5 test splits."""
    return {name: mean_defined(r.get(name) for r in rows) for name in METRIC_NAMES}
