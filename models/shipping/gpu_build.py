"""Build the MPNet reader on a GPU machine with N GPUs: one command (docs/models.md, "GPU build").

    python -m models.shipping.gpu_build --gpus N --backbone carry/mpnet --data carry/race.jsonl.gz \\
        --work build/mpnet --out $OUT [--scaling-steps 60] [--stop-after 420]

1. (--scaling-steps S) training throughput on 1 GPU and on N GPUs, S steps each, the same
   command under torchrun: scaling.json (questions/s, ratio).
2. training: `torchrun --nproc_per_node N -m models.training.train` on de-duplicated RACE train
   (role train of the pack), standard + shortcut in one model, mean pooling, AdamW lr 3e-5,
   32 questions a step per GPU, bf16 autocast, RACE dev for early stopping; stops mid-epoch
   after --stop-after seconds (the 10-minute limit of a device call).
3. evaluation (`models.evaluation.checkpoint_eval`): temperatures on RACE dev; RACE test high/middle/all,
   ExpMRC, EMBRACE, DREAM dev, QuAIL with 95% intervals, ECE before/after, shortcut N < 2.
4. the fp16 checkpoint split into parts below 16 MiB under --out (`models.shipping.carry`), with
   metrics, evaluation and scaling: at most 8 files come back per call, so a step that
   would leave more says which to fetch next (`--parts-from`).

The ONNX export (fp16 for GPU, int8 for CPU) runs from the joined checkpoint through
`models.export.package`; for MPNet that path is not validated yet (docs/models.md says so).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from models.shipping.carry import split

TRAIN_ARGS = ["--crossfit", "1", "--formats", "standard,shortcut", "--pooling", "mean", "--lr", "3e-5",
              "--batch-size", "32", "--max-tokens", str(32 * 4 * 512), "--epochs", "1", "--patience", "1",
              "--seed", "1", "--no-progress"]
# the 1-GPU and N-GPU throughput runs read the same first questions of the pack: enough for
# every rank's steps, without tokenizing all of RACE train twice more on the device's clock
SCALING_QUESTIONS = 8000
PART_BYTES = 16 * 1024 * 1024 - 4096  # strictly below the 16 MiB a call brings back


def torchrun(n: int, module_args: list[str]) -> list[str]:
    """The launch command: torchrun's own module, so no launcher of ours is involved."""
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(n),
            "-m", "models.training.train", *module_args]


def plan(args) -> list[tuple[str, list[str]]]:
    """(name, command) of every step, in order (pure: tested without a GPU)."""
    work = Path(args.work)
    common = ["--data", args.data, "--backbone", args.backbone, *TRAIN_ARGS]
    steps = []
    if args.scaling_steps:
        for n in sorted({1, args.gpus}):
            steps.append((f"throughput-{n}gpu", torchrun(n, [*common, "--out", str(work / f"scaling{n}"),
                                                             "--max-steps", str(args.scaling_steps),
                                                             "--limit", str(SCALING_QUESTIONS),
                                                             "--epochs", "1"])))
    train = [*common, "--out", str(work / "run")]
    if args.stop_after:
        train += ["--stop-after", str(args.stop_after)]
    steps.append(("train", torchrun(args.gpus, train)))
    steps.append(("evaluate", [sys.executable, "-m", "models.evaluation.checkpoint_eval", "--run", str(work / "run" / "final"),
                               "--data", args.data]))
    return steps


def scaling(work: Path, gpus: int) -> dict:
    """Training throughput (questions/s, all ranks) of the 1-GPU and N-GPU runs, and their ratio."""
    got = {}
    for n in sorted({1, gpus}):
        m = json.loads((work / f"scaling{n}" / "final" / "metrics.json").read_text())
        got[n] = m["training"]["train_questions_per_s"]
    return {"questions_per_s": got, "ratio": got[gpus] / got[1] if got.get(1) else None}


def collect(work: Path, out: Path, parts_from: int = 0, max_files: int = 8) -> list[str]:
    """Copy what comes back under `out`: the small JSON files and checkpoint parts, at most
    `max_files` files in all; returns the names of the parts left for a later call."""
    out.mkdir(parents=True, exist_ok=True)
    final = work / "run" / "final"
    small = [p for p in (final / "metrics.json", final / "evaluation.json", work / "scaling.json",
                         final / "model" / "config.json") if p.is_file()]
    parts_dir = work / "parts"
    manifest = parts_dir / f"model.safetensors.manifest.json"
    if not manifest.is_file():
        split(final / "model" / "model.safetensors", parts_dir, PART_BYTES)
    parts = json.loads(manifest.read_text())["parts"]
    files = [*small, manifest] if parts_from == 0 else [manifest]
    room = max_files - len(files)
    chosen = parts[parts_from:parts_from + room]
    for f in files:
        shutil.copy(f, out / f.name)
    for p in chosen:
        shutil.copy(parts_dir / p["name"], out / p["name"])
    return [p["name"] for p in parts[parts_from + len(chosen):]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.shipping.gpu_build", description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", type=int, required=True)
    ap.add_argument("--backbone", default="carry/mpnet")
    ap.add_argument("--data", default="carry/race.jsonl.gz")
    ap.add_argument("--work", default="build/mpnet", help="kept between calls of a warm machine (git-ignored)")
    ap.add_argument("--out", required=True, help="what comes back ($OUT)")
    ap.add_argument("--scaling-steps", type=int, default=0)
    ap.add_argument("--stop-after", type=float, default=400)
    ap.add_argument("--only", default="", help="comma list of steps to run (default: all); 'collect' alone "
                                               "with --parts-from brings back the next parts")
    ap.add_argument("--parts-from", type=int, default=0)
    args = ap.parse_args(argv)
    work = Path(args.work)
    only = set(filter(None, args.only.split(",")))
    for name, cmd in plan(args):
        if only and name not in only and not (name.startswith("throughput") and "throughput" in only):
            continue
        print(f"== {name}: {' '.join(cmd)}", flush=True)
        subprocess.run(cmd, check=True)
    if args.scaling_steps and (not only or "throughput" in only):
        (work / "scaling.json").write_text(json.dumps(scaling(work, args.gpus), indent=1))
    left = collect(work, Path(args.out), args.parts_from)
    print(json.dumps({"parts_left": left}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
