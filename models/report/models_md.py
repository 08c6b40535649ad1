"""Regenerate docs/models.md and its two figures for the shipped default model.

    python -m models.report [--model models/default] [--run docs/model_runs/mpnet-4xh100-2026-11-27] [--docs docs]

Everything comes from files in the repository: the model card (`card.json`: training, data,
de-duplication, temperatures, quantization, evaluation with intervals), the run records of
the build under `--run` (the evaluation rows behind the card's numbers, the training
throughput on 1 and 4 GPUs, the GPU benchmark and the None-of-the-above grid), the sizes of
the model files, and the hand-written runbook `docs/models_gpu_build.md`, appended as the
page's last part.  The card's evaluation must be what the rows give (`models.evaluation.summary`):
the report refuses to write a page whose numbers disagree with their rows.  Then
`python benchmarks/render_docs.py` fills the page's speed block from docs/bench_runs/.

The parts: `models.report.data` (the card checked against the rows, what the page needs),
`models.report.figures` (Figs. 4 and 5), `models.report.page` (the page).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from models.report.data import DEFAULT_RUN, ROOT, check_card_against_rows, compute, wilson
from models.report.figures import figure4, figure5, mi_groups
from models.report.page import targets, write_markdown

__all__ = ["main", "compute", "check_card_against_rows", "wilson", "figure4", "figure5", "mi_groups", "targets",
           "write_markdown", "DEFAULT_RUN", "ROOT"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.report", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "default"))
    ap.add_argument("--run", default=str(DEFAULT_RUN))
    ap.add_argument("--docs", default=str(ROOT / "docs"))
    args = ap.parse_args(argv)
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    res = compute(Path(args.model), Path(args.run).resolve())
    figure4(res["items"], docs / "models_fig4_neff.png")
    figure5(res["items"], docs / "models_fig5_mi.png")
    write_markdown(res, docs)
    print(f"wrote {docs / 'models.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
