"""Scoring a store: every stored question's probabilities (and the model's evidence), stored
per question, model and input format (`mcqlens score`, Model → Score all…).

The rows are `inference.score`'s: the window's model panel stores and shows the very same ones.
Predictions are stored in chunks, so an interrupted run keeps what it scored; the next run
scores only the (question, format) pairs not yet stored for this model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import inference
from desktop.domain.errors import ModelError
from desktop.domain.words import count
from inference import metrics
from inference.formatting import FORMATS

CHUNK = 256  # questions per store transaction: an interruption loses at most this much


def formats_for(arg: str | None, served: list[str]) -> list[str]:
    """The input formats to score: `arg` (comma-separated, checked against what the model
    serves), or by default standard and shortcut where the model serves them."""
    if arg is None:
        wanted = [f for f in ("standard", "shortcut") if f in served] or served
        return wanted
    wanted = [f.strip() for f in arg.split(",") if f.strip()]
    unknown = [f for f in wanted if f not in FORMATS]
    if unknown:
        raise ModelError(f"unknown input format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}")
    missing = [f for f in wanted if f not in served]
    if missing:
        raise ModelError(f"the model does not serve {', '.join(missing)} (it serves {', '.join(served)})")
    return wanted


@dataclass
class ScoreRun:
    """What one scoring run did: questions considered, already scored, scored now, rows stored."""

    model_id: str
    formats: list[str]
    questions: int = 0
    already: int = 0
    to_score: int = 0
    scored: int = 0
    stored: int = 0
    cancelled: bool = False

    def summary(self) -> str:
        head = (f"{count(self.questions, 'question')}, {self.already} already scored by {self.model_id}; "
                f"{self.to_score} to score in {', '.join(self.formats)}")
        if self.cancelled:
            return f"{head}; cancelled after {self.scored} (kept: run again to go on)"
        return f"{head}; scored {self.scored}, stored {count(self.stored, 'prediction')}"


def score_store(store, model, formats: list[str], source: str | None = None, items: list[str] | None = None,
                rescore: bool = False, progress: Callable[[int, int], None] | None = None,
                cancel: Callable[[], bool] | None = None, on_start: Callable[[ScoreRun], None] | None = None,
                on_chunk: Callable[[ScoreRun], None] | None = None, chunk: int | None = None) -> ScoreRun:
    """Score the stored questions (of `source`, or only `items`) with `model` and store the
    predictions, one transaction per `chunk` questions; what `mcqlens score` and the window's
    Model → Score all… do.

    Resumable: (question, format) pairs this model already has are skipped unless
    `rescore`.  `progress(done, total)` counts scores (questions × formats);
    `cancel()` turning true stops after the batch in flight, keeping every chunk stored;
    `on_start(run)` once the questions to score are known, `on_chunk(run)` after each
    stored chunk."""

    chunk = chunk or CHUNK  # read at call time (a test sets the module's CHUNK)
    run = ScoreRun(model.id, list(formats))
    # the rows of `items` alone (Score all's chunks ask for a few: not every item of the database)
    listed = store.items(source=source, item_ids=items)
    todo: dict[str, list[str]] = {}  # item_id -> formats to score
    stored: dict[str, dict] = {}
    for row in listed:
        # a standard row the window stored before its evidence (its first stage) is scored again
        have = {p.input_format: p for p in store.predictions(row.item_id, model.id)
                if not p.extra.get("evidence_pending")}
        stored[row.item_id] = have
        missing = list(formats) if rescore else [f for f in formats if f not in have]
        if missing:
            todo[row.item_id] = missing
    run.questions, run.to_score = len(listed), len(todo)
    run.already = run.questions - run.to_score
    if on_start is not None:
        on_start(run)
    if not todo:
        return run
    total = sum(len(v) for v in todo.values())
    passages: dict[str, object] = {}
    questions = []
    for row in listed:
        if row.item_id not in todo:
            continue
        if row.passage_id not in passages:
            passages[row.passage_id] = store.passage(row.passage_id)
        by_id = {q.id: q for q in passages[row.passage_id].questions}
        if row.item_id in by_id:
            questions.append(by_id[row.item_id])
    done_before = [0]

    def step(done, _total):
        if progress is not None:
            progress(done_before[0] + done, total)

    for start in range(0, len(questions), chunk):
        if cancel is not None and cancel():
            run.cancelled = True
            break
        part = questions[start:start + chunk]
        rows = []
        # questions needing the same formats are scored together
        groups: dict[tuple, list] = {}
        for q in part:
            groups.setdefault(tuple(todo[q.id]), []).append(q)
        scored_ids = set()
        for fmts, qs in groups.items():
            results = inference.score(model, qs, passages, list(fmts), progress=step, cancel=cancel)
            for r in results:
                rows.extend(prediction_rows(r, stored.get(r.item_id, {})))
                scored_ids.add(r.item_id)
            done_before[0] += len(results) * len(fmts)
        run.stored += store.add_predictions(rows)
        run.scored += len(scored_ids)
        if on_chunk is not None:
            on_chunk(run)
        if len(scored_ids) < len(part):  # cancelled inside the chunk: what finished is stored
            run.cancelled = True
            break
    return run


def prediction_rows(result, already: dict) -> list:
    """The new predictions, with MI completed from an earlier stored format when needed."""
    preds = result.predictions()
    if result.mi_bits is None:
        have = {p.input_format: p for p in preds}
        other = {**already, **have}
        if "standard" in other and "shortcut" in other:
            mi = float(metrics.entropy_bits(other["shortcut"].probabilities)
                       - metrics.entropy_bits(other["standard"].probabilities))
            for fmt in ("standard", "shortcut"):
                p = other[fmt]
                p.extra = {**p.extra, "mi_bits": mi}
                if fmt not in have:
                    preds.append(p)  # the older row gets its MI; its probabilities are unchanged
    return [(result.item_id, p) for p in preds]
