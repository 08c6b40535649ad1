"""`mcqlens expmrc predict|evaluate`: ExpMRC answer + evidence predictions and the official scores.

    mcqlens expmrc predict DATASET.json -o PREDICTIONS.json [--model DIR] [--evidence METHOD]
    mcqlens expmrc evaluate DATASET.json PREDICTIONS.json

`predict` answers every question with a model (ONNX, standard format) and picks an
evidence sentence (`inference.evidence_choice`: idf-recall-options by default, or the ExpMRC
seed's baselines most-similar-sentence and most-similar-sentence-with-question), and
writes {"<pid>-<j>": {"answer": "C", "evidence": "..."}}.  `evaluate` prints ALL_F1, ANS_F1, EVI_F1, TOTAL and SKIP as the official
scorer does (`desktop.domain.expmrc_metric`).
"""
from __future__ import annotations

import json
import sys

from desktop.app.paths import output_file
from desktop.commands.progress import Progress
from desktop.domain.errors import ModelError
from desktop.domain.expmrc_metric import score_multiple_choice
from desktop.domain.words import count
from desktop.formats import door, expmrc


def register(sub) -> None:
    p = sub.add_parser("expmrc", help="ExpMRC predictions (answer + evidence) and official scores",
                       description=__doc__.split("\n\n")[0])
    s = p.add_subparsers(dest="expmrc_command", metavar="ACTION")
    pr = s.add_parser("predict", help="answer and evidence for every question of an ExpMRC file")
    pr.add_argument("dataset", help="ExpMRC multiple-choice JSON (e.g. expmrc-race-dev.json)")
    pr.add_argument("-o", "--out", required=True, help="prediction file to write")
    pr.add_argument("--force", action="store_true", help="replace OUT if it exists (a regular file only)")
    pr.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    pr.add_argument("--model", default=None, help="model directory (default: $MCQLENS_MODEL, else the shipped models/default)")
    pr.add_argument("--evidence", default="idf-recall-options",
                    choices=("idf-recall-options", "most-similar-sentence-with-question", "most-similar-sentence"),
                    help="evidence method (default: idf-recall-options)")
    pr.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    pr.set_defaults(func=run_predict)
    ev = s.add_parser("evaluate", help="official ExpMRC scores of a prediction file")
    ev.add_argument("dataset")
    ev.add_argument("predictions")
    ev.set_defaults(func=run_evaluate)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def run_evaluate(args) -> int:
    # through the door every command reads a user's file: strict JSON, size cap, one error line
    dataset = expmrc.check_scorable(door.read_json(args.dataset, "dataset file"), args.dataset)
    predictions = expmrc.check_prediction_rows(door.read_json(args.predictions, "prediction file"),
                                               args.predictions)
    print(json.dumps(score_multiple_choice(dataset, predictions)))
    return 0


def run_predict(args) -> int:
    # inside: `inference` (numpy, tokenizers, onnxruntime) stays out of the command line's start-up
    from desktop.app.expmrc import predict, write_predictions
    from inference.catalog import locate_model

    door.input_file(args.dataset, what="dataset file")
    out = output_file(args.out, args.force)  # before minutes of scoring, not after
    model_dir = locate_model(args.model)
    if not (model_dir / "card.json").is_file():
        raise ModelError(f"{model_dir} is not a model directory (no card.json)")
    with Progress(0, "questions", quiet=args.no_progress, label="scoring") as bar:
        preds = predict(args.dataset, model_dir, args.evidence, args.device,
                        log=lambda m: print(m, file=sys.stderr), progress=bar)
    output_file(out, args.force)  # nothing else appeared at OUT while the model ran
    write_predictions(out, preds)
    print(f"wrote {count(len(preds), 'prediction')} to {out}", file=sys.stderr)
    return 0
