"""Rebuild the shipped default model (models/default) with one command, on a machine with a GPU.

    python -m models.build_default [--work carry/build] [--out models/default]

1. `models.data`: pack DREAM (train+test for training, dev for dev), QuAIL (dev set and
   challenge set; 15% of passages, by hash, for dev) and the RACE items of EMBRACE
   (green + yellow) and ExpMRC (RACE+ dev) from ../shared/data into one JSONL file.
2. `models.train`: all-MiniLM-L6-v2, standard + shortcut formats in one model, mean
   pooling, lr 5e-5, 4 epochs (early stopping on dev, patience 2), seed 1; 4 folds of
   cross-fitting for the RACE items, the fold runs and the final run in parallel on one
   GPU (about 6 minutes on an H200).
3. `models.package`: temperatures per format on dev, ONNX export validated against
   PyTorch, int8 graph validated against fp32 on 200 dev questions × 2 formats, card.
"""
from __future__ import annotations

import argparse
import sys

TRAIN_ARGS = ["--crossfit", "4", "--jobs", "5", "--epochs", "4", "--patience", "2", "--lr", "5e-5",
              "--pooling", "mean", "--seed", "1", "--time-budget", "490",
              "--eval-formats", "standard,shortcut,options,options_context", "--no-progress"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.build_default", description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="carry/build", help="folder for the packed data and the training run")
    ap.add_argument("--out", default="models/default")
    args = ap.parse_args(argv)
    from models import data, package, train

    packed = f"{args.work}/data.jsonl.gz"
    data.main(["-o", packed])
    train.main(["--data", packed, "--out", f"{args.work}/run", *TRAIN_ARGS])
    package.main(["--run", f"{args.work}/run", "--out", args.out, "--data", packed, "--validation", "200",
                  "--command", "python -m models.build_default"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
