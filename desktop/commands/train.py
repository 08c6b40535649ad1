"""`mcqlens train`: fine-tune a multiple-choice reader (standard, shortcut, options, options_context).

The same as `python -m models.training.train` (see that module for cross-fitting, early stopping
and outputs); `python -m models.export.package` turns a run into a model directory.
"""
from __future__ import annotations

import json

from models.training.train import build_parser
from models.training.train import run as train


def register(sub) -> None:
    p = sub.add_parser("train", help="train a model (standard/shortcut formats, cross-fitting, early stopping)",
                       description=__doc__.split("\n\n")[0])
    build_parser(p)
    p.set_defaults(func=run)


def run(args) -> int:
    summary = train(args)
    final = summary.get("runs", {}).get("final", {}) if isinstance(summary, dict) else {}
    print(json.dumps({"dev_accuracy": final.get("dev_accuracy"), "out": args.out}))
    return 0
