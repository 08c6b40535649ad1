"""Evaluate models on NOTA-transformed test sets: the seed's test-set × model grid.

A multiple-choice encoder scores every alternative on its own (one logit per
(passage, stem, alternative) sequence, softmax across them), so the score of an
alternative the transform did not touch is the same in every C and every replica.
Each question is therefore encoded once per model: its original alternatives plus
the NOTA text, all in one call (so scores are on one scale even when the scorer
returns log-probabilities rather than logits).  The 11 C × 5 replicas grid is then
a matter of lookups and argmaxes.

`run(...)` is a plain function with a `progress` callable, usable from the command
line, a worker thread and tests alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from desktop.domain import nota
from desktop.domain.errors import InputError
from desktop.domain.model import Passage, Question

# (passage text, stem, alternatives, index of the NOTA alternative or None) -> one score per alternative
ScoreItem = tuple[str, str, Sequence[str], "int | None"]
Scorer = Callable[[Sequence[ScoreItem]], Sequence[Sequence[float]]]
Progress = Callable[[int, int, str], None]


@dataclass
class ModelUnderTest:
    name: str  # the column label
    scorer: Scorer
    fmt: str = "standard"


@dataclass
class AlternativeScores:
    """Cache of encoder scores per (question, alternative text, NOTA?, format)."""

    scorer: Scorer
    fmt: str
    scores: dict[tuple[str, str, bool, str], float] = field(default_factory=dict)
    calls: int = 0  # questions sent to the encoder, for the benchmark

    def ensure(self, passages: Sequence[Passage], text: str, batch: int = 256,
               progress: Progress | None = None, label: str = "") -> None:
        """Score every question's original alternatives and the NOTA text, once."""
        todo: list[tuple[Question, Passage]] = []
        for p in passages:
            for q in p.questions:
                if any(self._k(q, a, False) not in self.scores for a in q.alternatives) \
                        or self._k(q, text, True) not in self.scores:
                    todo.append((q, p))
        for start in range(0, len(todo), batch):
            chunk = todo[start:start + batch]
            items = [(p.text, q.stem, list(q.alternatives) + [text], len(q.alternatives)) for q, p in chunk]
            out = self.scorer(items)
            self.calls += len(items)
            for (q, _), s in zip(chunk, out):
                s = list(s)
                for a, v in zip(q.alternatives, s):
                    self.scores.setdefault(self._k(q, a, False), float(v))
                self.scores[self._k(q, text, True)] = float(s[-1])
            if progress:
                progress(min(start + batch, len(todo)), len(todo), label)

    def _k(self, q: Question, alternative: str, is_nota: bool) -> tuple[str, str, bool, str]:
        return (f"{q.passage_id}\x1f{q.id}", alternative, is_nota, self.fmt)


def predict_changes(cache: AlternativeScores, originals: dict[str, Question],
                    changes: Iterable[nota.NotaChange], text: str) -> nota.Confusion:
    """Confusion of one transformed test set from the cached scores (no encoder call)."""
    conf = nota.Confusion()
    for ch in changes:
        q = originals[ch.question_id]
        best, best_i = None, 0
        for i, a in enumerate(q.alternatives):
            v = cache.scores[cache._k(q, text, True)] if i == ch.replaced else cache.scores[cache._k(q, a, False)]
            if best is None or v > best:
                best, best_i = v, i
        conf.add(ch.answerable, best_i, ch.key, ch.replaced)
    return conf


def run(models: Sequence[ModelUnderTest], passages: Sequence[Passage], cs: Sequence[str | float],
        seed: int | str = 1, replicas: int = 5, text: str = nota.NOTA_TEXT,
        progress: Progress | None = None) -> list[dict]:
    """One row per (model, C, replica): counts and the seven metrics (None where undefined)."""
    originals = {q.id: q for p in passages for q in p.questions}
    if len(originals) != sum(len(p.questions) for p in passages):
        dup = next(i for i in originals if sum(q.id == i for p in passages for q in p.questions) > 1)
        raise InputError(dup, None, None, "question id occurs in more than one file or passage; "
                         "evaluate one source at a time")
    caches = []
    for m in models:
        cache = AlternativeScores(m.scorer, m.fmt)
        cache.ensure(passages, text, progress=progress, label=m.name)
        caches.append(cache)
    rows = []
    for c in cs:
        for r in range(1, replicas + 1):
            # every input passage is test data here: each replica transforms all of them
            changes = nota.plan(passages, c, seed, r, text)
            n_unanswerable = sum(not ch.answerable for ch in changes)
            for m, cache in zip(models, caches):
                conf = predict_changes(cache, originals, changes, text)
                rows.append({"model": m.name, "format": m.fmt, "c": float(c), "replica": r,
                             "n": conf.n, "unanswerable": n_unanswerable,
                             "true_nota": conf.true_nota, "missed_nota": conf.missed_nota,
                             "false_nota": conf.false_nota, "correct": conf.correct, "wrong": conf.wrong,
                             **nota.metrics(conf)})
    return rows


def grid(rows: Sequence[dict]) -> list[dict]:
    """Metrics averaged over replicas per (C, model), as the seed averages its 5 test splits."""
    cells: dict[tuple[float, str], list[dict]] = {}
    for row in rows:
        cells.setdefault((row["c"], row["model"]), []).append(row)
    return [{"c": c, "model": m, "replicas": len(rs), **nota.mean_metrics(rs)}
            for (c, m), rs in cells.items()]
