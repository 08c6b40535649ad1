"""`mcqlens score --db DB [--model DIR] [--formats standard,shortcut] [--device auto|cpu|cuda]`.

Scores every stored question with a model and stores, per question and input format,
the probabilities over the alternatives with the model's id (plus predicted
alternative, entropy, effective number of options and, when both standard and shortcut
exist, the contextual mutual information; the standard row carries the model's evidence).
The rows are `inference.score`'s: the window stores and shows the very same ones.  Predictions are written in chunks, so an
interrupted run keeps what it scored; the next run scores only the (question, format)
pairs not yet stored for this model.

The work is `desktop.app.score.score_store` (the window's Model → Score all… runs it too);
the model directory is `inference.catalog.locate_model`'s.
"""
from __future__ import annotations

import sys

from desktop.commands.progress import Progress
from desktop.domain.errors import ModelError
from desktop.domain.words import count
from desktop.store import Store


def register(sub) -> None:
    p = sub.add_parser("score", help="store model probabilities (standard, shortcut, ...) for every question",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("--db", default="annotations.db", help="database file (default: ./annotations.db)")
    p.add_argument("--model", default=None, help="model directory (default: $MCQLENS_MODEL, else the shipped models/default)")
    p.add_argument("--formats", default=None,
                   help="comma-separated input formats (default: standard,shortcut where the model serves them)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--source", default=None, help="score only questions of this source")
    p.add_argument("--rescore", action="store_true", help="score again what is already stored")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    # inside: `inference` (numpy, tokenizers, onnxruntime) stays out of the command line's start-up
    import inference
    from desktop.app.score import formats_for, score_store
    from inference.catalog import locate_model

    model_dir = locate_model(args.model)
    if not args.model and not (model_dir / "card.json").is_file():
        raise ModelError(f"no model is installed at {model_dir}; train one (`mcqlens train`) or pass "
                         "--model DIR (a directory with card.json, tokenizer.json and an .onnx graph)")
    model = inference.load_model(model_dir, device=args.device)
    if model.fallback:
        print(f"warning: {model.fallback}", file=sys.stderr)
    print(f"model {model.id} ({model.card.name}): {model.message}", file=sys.stderr)
    formats = formats_for(args.formats, model.formats)

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
