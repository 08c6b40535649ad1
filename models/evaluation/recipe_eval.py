"""A model directory's logits through the product's CPU recipes, on every core of a machine.

    python -m models.evaluation.recipe_eval --model DIR --data race.jsonl.xz --out OUT \\
        --task fp32:race-dev:384 --task int8x2:race-dev:384 --task int8x2:race-test:384 ... [--workers 16]

Each task is (recipe, set, max length); its records are split into shards handed to `--workers`
processes, each loading the model itself (`inference.load_model` with MCQLENS_CPU_RECIPE and one
thread) and scoring its shard in both formats (or `--formats`) through the runner the product scores with
(`Runner.logits_one`).  Rows (`id, source, level, role, key, format, logits, recipe, max_length`)
land in OUT/<recipe>_<set>_<length>.jsonl.gz as each task completes, and OUT/progress.json says
what is done; `models.evaluation.product_eval`'s `summarise` turns them into the card's evaluation.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path

import inference
from inference.one_sequence import encode
from models.evaluation.product_eval import SETS
from models.training.data import read_jsonl


def _score_shard(job) -> list[dict]:
    model_dir, recipe, length, records, formats = job
    os.environ["MCQLENS_CPU_RECIPE"] = recipe
    model = inference.load_model(model_dir, device="cpu", threads=1)
    model.card.max_length = length
    out = []
    for fmt in formats:
        runner = model.runner_for(fmt)
        for r in records:
            z = runner.logits_one(encode(model.tokenizer, [(r["passage"], r["stem"], r["alternatives"])], fmt,
                                         length))[0]
            out.append({"id": r["id"], "format": fmt, "key": r.get("key"), "source": r["source"],
                        "level": r.get("level"), "role": r["role"], "recipe": runner.recipe,
                        "max_length": length, "logits": [float(x) for x in z[: len(r["alternatives"])]]})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.evaluation.recipe_eval", description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--task", action="append", required=True, help="RECIPE:SET:LENGTH")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--shard", type=int, default=100, help="records per job")
    ap.add_argument("--formats", default="standard,shortcut",
                    help="the formats to score (a reader that serves one format is checked in that one)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = read_jsonl(args.data)
    progress = {"tasks": {}, "started": time.time()}
    with get_context("spawn").Pool(args.workers) as pool:
        for task in args.task:
            recipe, name, length = task.split(":")
            part = [r for r in records if SETS[name](r)]
            jobs = [(args.model, recipe, int(length), part[i:i + args.shard], args.formats.split(","))
                    for i in range(0, len(part), args.shard)]
            t0 = time.time()
            rows = [row for chunk in pool.imap(_score_shard, jobs) for row in chunk]
            path = out / f"{recipe}_{name}_{length}.jsonl.gz"
            tmp = path.with_suffix(".partial")
            with gzip.open(tmp, "wt") as f:
                for row in rows:
                    f.write(json.dumps(row) + "\n")
            tmp.replace(path)
            progress["tasks"][task] = {"questions": len(part), "seconds": round(time.time() - t0, 1)}
            (out / "progress.json").write_text(json.dumps(progress, indent=1))
            print(json.dumps({"task": task, **progress["tasks"][task]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
