"""Evaluate a shipped model directory through the product's runtime (`inference.load_model`).

    python -m models.evaluation.product_eval --model models/default --data carry/race.jsonl.xz --device cpu \\
        --sets race-test,race-dev -o out/eval

Reads the packed records (`models.training.race_pack`), scores the chosen sets in both formats with
the loaded model's runner (the same `Runner.logits` that `inference.score` calls), writes
`rows.jsonl.gz` (id, source, level, role, key, format, logits) and `evaluation.json`
(`models.evaluation.summary.summarise`: temperatures fitted on RACE dev, accuracy with intervals,
ECE, shortcut N < 2) as each set finishes.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

import inference
from inference.formatting import encode_questions
from inference.one_sequence import encode
from models.evaluation.summary import summarise
from models.training.data import read_jsonl

SETS = {"race-test": lambda r: r["source"] == "race" and r["role"] == "eval",
        "race-dev": lambda r: r["role"] == "dev",
        "expmrc": lambda r: r["source"] == "expmrc",
        "embrace": lambda r: r["source"] == "embrace",
        "dream": lambda r: r["source"] == "dream",
        "quail": lambda r: r["source"] == "quail"}


def score_records(model, records: list[dict], fmt: str, tokens_per_batch: int) -> list[list[float]]:
    if getattr(model, "one_sequence", False):  # one sequence per question: the runner's own path
        out, runner = [], model.runner_for(fmt)
        for r in records:
            z = runner.logits_one(encode(model.tokenizer, [(r["passage"], r["stem"], r["alternatives"])], fmt,
                                         model.card.max_length))[0]
            out.append([float(x) for x in z[: len(r["alternatives"])]])
        return out

    order = sorted(range(len(records)), key=lambda i: len(records[i]["passage"]) + len(records[i]["stem"]))
    out: list = [None] * len(records)
    batch: list[int] = []

    def flush():
        enc = encode_questions(model.tokenizer, [(records[i]["passage"], records[i]["stem"], records[i]["alternatives"])
                                                 for i in batch], fmt, model.card.max_length)
        z = model.runner_for(fmt).logits(enc)
        for row, i in zip(z, batch):
            out[i] = [float(x) for x in row[: len(records[i]["alternatives"])]]
        batch.clear()

    for i in order:
        batch.append(i)
        if len(batch) * 4 * 512 >= tokens_per_batch:
            flush()
    if batch:
        flush()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.evaluation.product_eval", description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--every", type=int, default=1, help="every k-th record of each set (a quick look)")
    args = ap.parse_args(argv)
    model = inference.load_model(args.model, device=args.device)
    budget = inference.GPU_TOKENS_PER_BATCH if model.runner.on_gpu else 16 * 4 * 512
    records = read_jsonl(args.data)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, timing = [], {}
    for name in args.sets.split(","):
        part = [r for r in records if SETS[name](r)][:: args.every]
        t0 = time.perf_counter()
        for fmt in ("standard", "shortcut"):
            for r, z in zip(part, score_records(model, part, fmt, budget)):
                rows.append({"id": r["id"], "format": fmt, "key": r.get("key"), "source": r["source"],
                             "level": r.get("level"), "role": r["role"], "logits": z})
        timing[name] = round(time.perf_counter() - t0, 1)
        with gzip.open(out / "rows.jsonl.gz", "wt") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        if any(r["role"] == "dev" for r in rows):
            summary = summarise([r for r in rows if r["role"] == "dev"], [r for r in rows if r["role"] == "eval"])
            summary.update(model=model.card.id, device=model.message, seconds=timing,
                           recipe=getattr(model.runner, "recipe", None), max_length=model.card.max_length)
            (out / "evaluation.json").write_text(json.dumps(summary, indent=1))
        print(json.dumps({"set": name, "questions": len(part), "seconds": timing[name]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
