"""`mcqlens score` of a whole store, as a user runs it: EMBRACE green + yellow and ExpMRC RACE+ dev.

Issue 28's target: the 1,726 questions of those three files, both formats with the model's
evidence, with the shipped default, on the development machine in at most 60 minutes, with
progress and the time left shown.  The files are imported into a fresh database
(`mcqlens import`), then `mcqlens score --db DB` runs in its own process (start-up, the cold
model load and every chunk's write included).  Its stderr is kept: the progress lines must say
how much is left.  Afterwards the stored rows are counted through `mcqlens export-predictions`
(every question in both formats, the standard rows with their evidence).

Prints the minutes and writes the run record (benchmarks/runs.py: docs/bench_runs/
bench_score_store_<UTC date and time>.json, with the CPU, its flags and the load average at the
start and the end) unless --no-save; `python benchmarks/render_docs.py` then puts it in
docs/benchmarks.md.

    python benchmarks/bench_score_store.py [--model DIR] [--keep DIR] [--no-save]
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.runs import SHIPPED, Row, Run, command_line, model_fingerprint, write  # noqa: E402

DATA = (ROOT.parent / "shared" / "data").resolve()
FILES = [DATA / "embrace" / "embrace_green.jsonl", DATA / "embrace" / "embrace_yellow.jsonl",
         DATA / "expmrc" / "expmrc-race-dev.json"]
QUESTIONS = 1726  # 200 green + 965 yellow + 561 ExpMRC RACE+ dev (the files' own record counts)
TARGET_MIN = 60.0


def _cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "desktop.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mcqlens {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(SHIPPED), help="model directory (default: the shipped one)")
    ap.add_argument("--keep", help="folder for the database (default: a temporary one)")
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    load_start = os.getloadavg()
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="mcqlens_score_")
    folder = Path(args.keep or tmp.name)
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "score.db"
    if db.exists():
        raise SystemExit(f"error: {db} exists: the benchmark scores a fresh database")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MCQLENS_MODEL", None)
    _cli("import", *map(str, FILES), "--db", str(db), env=env)

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # progress on stderr as a user sees it (a tty is not needed: the bar falls back to lines)
    done = _cli("score", "--db", str(db), "--model", args.model, env=env)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_mb = after.ru_maxrss / 1024
    err = done.stderr
    left = re.findall(r"(?:about [^\n]*? left|left[^\n]*)", err)

    out = folder / "predictions.csv"
    _cli("export", "predictions", "--db", str(db), "-o", str(out), env=env)
    with out.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    by_format: dict[str, set] = {}
    with_evidence = 0
    for r in rows:
        by_format.setdefault(r["format"], set()).add(r["item_id"])
        if r["format"] == "standard" and r["evidence"].strip():
            with_evidence += 1
    minutes = seconds / 60
    print(f"mcqlens score, {QUESTIONS} questions, both formats with evidence: {minutes:.1f} min "
          f"(CPU {cpu_s / 60:.1f} min, peak {peak_mb:.0f} MB); rows: "
          + ", ".join(f"{k} {len(v)}" for k, v in sorted(by_format.items()))
          + f"; standard rows with evidence {with_evidence}; progress lines saying what is left: {len(left)}")
    print(f"load average at the start {load_start[0]:.2f}, at the end {os.getloadavg()[0]:.2f} "
          f"({os.cpu_count()} CPUs)")
    if not args.no_save:
        how = ("`mcqlens score --db DB` in its own process on a fresh database of the three files: start-up, the "
               "cold model load, both formats and the evidence, every chunk's write")
        run = Run(benchmark="bench_score_store", command=command_line("bench_score_store.py", argv),
                  model=model_fingerprint(args.model))
        run.headline += [
            Row(f"mcqlens score, EMBRACE green + yellow and ExpMRC RACE+ dev ({QUESTIONS:,} questions, both "
                "formats with evidence)", round(minutes, 2), "min", target=f"≤ {TARGET_MIN:.0f} min",
                met=minutes <= TARGET_MIN and len(left) > 0, detail=how),
        ]
        run.context += [
            Row("CPU time of the scoring process (user + system)", round(cpu_s / 60, 2), "min",
                detail="both cores: CPU time can exceed the wall time"),
            Row("per question, both formats with evidence (wall)", round(1000 * seconds / QUESTIONS, 1), "ms",
                detail="the whole run over the questions"),
            Row("peak memory of the scoring process", round(peak_mb, 1), "MB", detail="ru_maxrss of the children"),
        ]
        run.raw = {"seconds": seconds, "cpu_seconds": cpu_s, "questions": QUESTIONS,
                   "rows_by_format": {k: len(v) for k, v in by_format.items()},
                   "standard_rows_with_evidence": with_evidence, "progress_lines_saying_left": len(left),
                   "progress_sample": left[:3] + left[-3:], "stdout": done.stdout[-2000:]}
        run.notes.append("Measured on a 2-core machine shared with other programs when the load average says so; "
                         "CPU time is given beside the wall time.")
        write(run, load_start)
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
