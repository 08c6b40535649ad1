"""The speed/accuracy frontier of the CPU reader's candidates, in one run on one CPU.

    python benchmarks/bench_frontier.py --candidate m12=DIR --candidate m6=DIR ... [--questions 20] [--threads 2]

For every candidate model directory, at each maximum length asked (`--lengths 384,512`): the
latency of one question through the product (`inference.load_model` + `inference.score`), both
formats without evidence and the shortcut format alone, on RACE dev questions of real lengths
(every k-th, one per call, after one warm-up question), with the CPU recipe the runtime picks on
this CPU.  Accuracy is not measured here: it comes from each candidate's evaluation records
(`models.evaluation.product_eval`, or the training run's float32 logits), joined in docs/models.md by
`python -m models.report.frontier`.  Writes a run record (benchmarks/runs.py); the CPU's model and flags
(VNNI, AMX) are in it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.bench_inference import pct, questions, timed  # noqa: E402
from benchmarks.runs import Row, Run, command_line, model_fingerprint, write  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidate", action="append", required=True, help="NAME=DIR (repeat)")
    ap.add_argument("--lengths", default="384,512")
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    import inference

    load_start = os.getloadavg()
    qs, passages = questions(args.questions)
    tmp = Path(tempfile.mkdtemp(prefix="bench_frontier_"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    result = {"questions": len(qs), "threads": args.threads,
              "cpus_allowed": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
              "candidates": {}}
    for spec in args.candidate:
        name, directory = spec.split("=", 1)
        model = inference.load_model(directory, device="cpu", threads=args.threads)
        lengths = [int(x) for x in args.lengths.split(",")] if model.one_sequence else [model.card.max_length]
        for length in lengths:
            model.card.max_length = length  # the same files read at another length
            inference.score(model, [qs[0]], passages, ["standard", "shortcut"], evidence=None)
            both = timed(lambda q: inference.score(model, [q], passages, ["standard", "shortcut"], evidence=None),
                         qs[1:])
            short = timed(lambda q: inference.score(model, [q], passages, ["shortcut"], evidence=None), qs[1:])
            key = f"{name}@{length}"
            result["candidates"][key] = {
                "directory": str(directory), "layout": model.card.layout, "max_length": length,
                "recipe": getattr(model.runner, "recipe", None), "graph": model.message,
                "both_ms": {"median": pct(both, 50), "p95": pct(both, 95)},
                "shortcut_ms": {"median": pct(short, 50), "p95": pct(short, 95)}}
            print(json.dumps({key: result["candidates"][key]["both_ms"]}), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    run = Run(benchmark="bench_frontier", command=command_line("bench_frontier.py", argv), raw=result)
    shipped = next((c for c in args.candidate if Path(c.split("=", 1)[1]).resolve() == (ROOT / "models" / "default").resolve()),
                   None)
    run.model = model_fingerprint(shipped.split("=", 1)[1]) if shipped else None
    for key, c in result["candidates"].items():
        subject = f"candidate {key} ({c['layout']}, recipe {c['recipe']})"
        run.context += [Row(f"{key}: both formats, no evidence: p95", c["both_ms"]["p95"], "ms", subject=subject),
                        Row(f"{key}: both formats, no evidence: median", c["both_ms"]["median"], "ms", subject=subject),
                        Row(f"{key}: shortcut alone: p95", c["shortcut_ms"]["p95"], "ms", subject=subject)]
    run.notes.append("Latency of one question through inference.score, after one warm-up question; accuracy is "
                     "joined from the candidates' evaluation records in docs/models.md.")
    write(run, load_start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
