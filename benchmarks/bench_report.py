"""`mcqlens report` and `mcqlens agreement` on all of RACE against the 1,726-item database.

Issue 17's target: the corpus report on all of ../shared/data/race (97,687 questions)
takes under 5x its time on the EMBRACE green + yellow + ExpMRC dev database (1,726
items), both measured in this run.  Each command runs as its own process (`python -m
desktop.cli ...`, as a user runs it: start-up and imports included); the small database
is measured before and after RACE and its mean is the baseline, so a change of machine
load during the run shows as a gap between the two.

Prints the seconds and the ratios, and writes the run record (benchmarks/runs.py:
docs/bench_runs/bench_report_<UTC date and time>.json, with the machine and the load
average at the start and the end) unless --no-save; `python benchmarks/render_docs.py`
then puts it in docs/benchmarks.md.

    python benchmarks/bench_report.py [--keep DIR] [--no-save]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = (ROOT.parent / "shared" / "data").resolve()
SMALL = [DATA / "embrace" / "embrace_green.jsonl", DATA / "embrace" / "embrace_yellow.jsonl",
         DATA / "expmrc" / "expmrc-race-dev.json"]
RACE = DATA / "race"
TARGET = 5.0


CPU: dict[tuple, float] = {}  # CPU seconds (user + system) of each command, by its arguments


def _cli(*args: str) -> float:
    """Wall seconds of one `mcqlens` command in a fresh process (fails loudly); its CPU
    seconds go to CPU (a loaded machine stretches wall time, much less CPU time)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "desktop.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[args] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"mcqlens {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return seconds


def _database(path: Path, inputs: list[Path]) -> float:
    if path.exists():
        return 0.0
    return _cli("import", *map(str, inputs), "--db", str(path))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", metavar="DIR", help="build the databases in DIR and keep them (reused when there)")
    ap.add_argument("--no-save", action="store_true", help="do not write the run record under docs/bench_runs/")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.runs import Row, Run, command_line, write

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="bench_report_")
    work = Path(args.keep or tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    small_db, race_db = work / "small.db", work / "race.db"
    load_start = os.getloadavg()
    imports = {"small": _database(small_db, SMALL), "race": _database(race_db, [RACE])}

    runs: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for command, flag in (("report", "-o"), ("agreement", "-o")):
        for name, db in (("small", small_db), ("race", race_db), ("small", small_db)):
            args_ = (command, "--db", str(db), flag, str(work / f"{command}_{name}"))
            runs.setdefault(f"{command}_{name}", []).append(_cli(*args_))
            cpu.setdefault(f"{command}_{name}", []).append(CPU[args_])
    load_end = os.getloadavg()

    def mean(xs):
        return sum(xs) / len(xs)

    report_small, agreement_small = mean(runs["report_small"]), mean(runs["agreement_small"])
    report_ratio = runs["report_race"][0] / report_small
    agreement_ratio = runs["agreement_race"][0] / agreement_small
    report_cpu_ratio = cpu["report_race"][0] / mean(cpu["report_small"])
    agreement_cpu_ratio = cpu["agreement_race"][0] / mean(cpu["agreement_small"])
    print(f"import (not in the ratio): small {imports['small']:.1f} s, RACE {imports['race']:.1f} s"
          + (" (0: reused)" if args.keep else ""))
    print(f"mcqlens report:    1,726 items {', '.join(f'{x:.2f}' for x in runs['report_small'])} s; "
          f"RACE {runs['report_race'][0]:.2f} s; ratio {report_ratio:.2f} (target < {TARGET:g}); CPU seconds "
          f"{', '.join(f'{x:.2f}' for x in cpu['report_small'])} vs {cpu['report_race'][0]:.2f}, "
          f"ratio {report_cpu_ratio:.2f}")
    print(f"mcqlens agreement: 1,726 items {', '.join(f'{x:.2f}' for x in runs['agreement_small'])} s; "
          f"RACE {runs['agreement_race'][0]:.2f} s; ratio {agreement_ratio:.2f} (target < {TARGET:g}); CPU ratio "
          f"{agreement_cpu_ratio:.2f}")
    print(f"load average at the start {load_start[0]:.2f}, at the end {load_end[0]:.2f} ({os.cpu_count()} CPUs; "
          "a loaded machine stretches both sides, not always equally)")

    if not args.no_save:
        how = ("each command a fresh process, wall clock; the 1,726-item database (EMBRACE green + yellow + "
               "ExpMRC dev) measured before and after all of RACE (97,687 questions), their mean the baseline")
        run = Run(benchmark="bench_report", command=command_line("bench_report.py", argv))
        run.headline += [
            Row("mcqlens report, all of RACE / 1,726 items", report_ratio, "x", target=f"< {TARGET:g}x",
                met=report_ratio < TARGET, detail=how),
            Row("mcqlens report, all of RACE / 1,726 items, CPU time", report_cpu_ratio, "x",
                target=f"< {TARGET:g}x", met=report_cpu_ratio < TARGET,
                detail="user + system CPU seconds of the same commands: what load on the machine stretches least"),
            Row("mcqlens report, all of RACE", runs["report_race"][0], "s", detail=how),
            Row("mcqlens report, 1,726 items", report_small, "s", detail=how),
            Row("mcqlens agreement, all of RACE / 1,726 items", agreement_ratio, "x", target=f"< {TARGET:g}x",
                met=agreement_ratio < TARGET, detail=how),
        ]
        run.raw = {"seconds": runs, "cpu_seconds": cpu, "import_seconds": imports,
                   "items": {"small": 1726, "race": 97687}}
        run.notes.append("The wall-clock ratio is the target; on a machine shared with other work it depends on "
                         "the load during each command, so the CPU-time ratio of the same commands is given "
                         "beside it.")
        write(run, load_start)
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
