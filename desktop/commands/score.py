"""`mcqlens score --db DB [--model DIR] [--formats standard,shortcut] [--device auto|cpu|cuda]`.

Scores every stored question with a model and stores, per question and input format,
the probabilities over the alternatives with the model's id (plus predicted
alternative, entropy, effective number of options and, when both standard and shortcut
exist, the contextual mutual information; the standard row carries the model's evidence).
The rows are `inference.score`'s: the window stores and shows the very same ones.  Predictions are written in chunks, so an
interrupted run keeps what it scored; the next run scores only the (question, format)
pairs not yet stored for this model.

`score_store` is that work as a function of an open store: the command runs it, and so
does the window's Model → Score all… (in a worker thread, with Cancel).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from desktop.domain.words import count


DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "models" / "default"
CHUNK = 256  # questions per store transaction: an interruption loses at most this much


def register(sub) -> None:
    p = sub.add_parser("score", help="store model probabilities (standard, shortcut, ...) for every question",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("--model", default=None, help=f"model directory (default: the shipped {DEFAULT_MODEL})")
    p.add_argument("--formats", default=None,
                   help="comma-separated input formats (default: standard,shortcut where the model serves them)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--source", default=None, help="score only questions of this source")
    p.add_argument("--rescore", action="store_true", help="score again what is already stored")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def default_model_dir() -> Path | None:
    return DEFAULT_MODEL if (DEFAULT_MODEL / "card.json").is_file() else None


def _formats(arg: str | None, served: list[str]) -> list[str]:
    from desktop.domain.errors import ModelError
    from inference.formatting import FORMATS

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
    import inference

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
                rows.extend(_rows(r, stored.get(r.item_id, {})))
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


def run(args) -> int:
    import inference
    from desktop.domain.errors import ModelError
    from desktop.store import Store

    model_dir = Path(args.model) if args.model else default_model_dir()
    if model_dir is None:
        raise ModelError(f"no model is installed at {DEFAULT_MODEL}; train one (`mcqlens train`) or pass "
                         "--model DIR (a directory with card.json, tokenizer.json and an .onnx graph)")
    model = inference.load_model(model_dir, device=args.device)
    if model.fallback:
        print(f"warning: {model.fallback}", file=sys.stderr)
    print(f"model {model.id} ({model.card.name}): {model.message}", file=sys.stderr)
    formats = _formats(args.formats, model.formats)

    from desktop.commands.progress import Progress

    with Store.open(args.db, create=False) as store:
        def start(run):
            print(f"{count(run.questions, 'question')}, {run.already} already scored by {model.id}; "
                  f"{run.to_score} to score in {', '.join(formats)}", file=sys.stderr)

        # the progress every long command shows: a bar on a terminal, a line every few seconds otherwise
        with Progress(0, "scores", quiet=args.no_progress, label="scoring", eta=True) as progress:
            run = score_store(store, model, formats, source=args.source, rescore=args.rescore,
                              progress=progress, on_start=start)
        if run.to_score:
            print(f"stored {count(run.stored, 'prediction')} of {model.id}", file=sys.stderr)
    return 0


def _rows(result, already: dict) -> list:
    """The new predictions, with MI completed from an earlier stored format when needed."""
    from inference import metrics

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
