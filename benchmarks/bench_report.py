"""`mcqlens report` and `mcqlens agreement` on all of RACE against the 1,726-item database.

Issue 17's target: the corpus report on all of ../shared/data/race (97,687 questions)
takes under 5x its time on the EMBRACE green + yellow + ExpMRC dev database (1,726
items), both measured in this run.  Each command runs as its own process (`python -m
desktop.cli ...`, as a user runs it: start-up and imports included); the small database
is measured before and after RACE and its mean is the baseline, so a change of machine
load during the run shows as a gap between the two.

Prints the seconds and the ratios, and writes the run as JSON to
docs/bench_runs/bench_report_<date>.json (with the load average before and after and
the machine), unless --no-save.

    python benchmarks/bench_report.py [--keep DIR] [--no-save]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
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


def _cli(*args: str) -> float:
    """Wall seconds of one `mcqlens` command in a fresh process (fails loudly)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "desktop.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"mcqlens {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return seconds


def _database(path: Path, inputs: list[Path]) -> float:
    if path.exists():
        return 0.0
    return _cli("import", *map(str, inputs), "--db", str(path))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", metavar="DIR", help="build the databases in DIR and keep them (reused when there)")
    ap.add_argument("--no-save", action="store_true", help="do not write docs/bench_runs/bench_report_<date>.json")
    args = ap.parse_args()

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="bench_report_")
    work = Path(args.keep or tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    small_db, race_db = work / "small.db", work / "race.db"
    load_before = os.getloadavg()
    imports = {"small": _database(small_db, SMALL), "race": _database(race_db, [RACE])}

    runs: dict[str, list[float]] = {}
    for name, db in (("small", small_db), ("race", race_db), ("small", small_db)):
        runs.setdefault(f"report_{name}", []).append(_cli("report", "--db", str(db), "-o", str(work / f"r_{name}")))
    for name, db in (("small", small_db), ("race", race_db), ("small", small_db)):
        runs.setdefault(f"agreement_{name}", []).append(
            _cli("agreement", "--db", str(db), "-o", str(work / f"a_{name}")))
    load_after = os.getloadavg()

    def mean(xs):
        return sum(xs) / len(xs)

    report_ratio = runs["report_race"][0] / mean(runs["report_small"])
    agreement_ratio = runs["agreement_race"][0] / mean(runs["agreement_small"])
    print(f"import (not in the ratio): small {imports['small']:.1f} s, RACE {imports['race']:.1f} s"
          + (" (0: reused)" if args.keep else ""))
    print(f"mcqlens report:    1,726 items {', '.join(f'{x:.2f}' for x in runs['report_small'])} s; "
          f"RACE {runs['report_race'][0]:.2f} s; ratio {report_ratio:.2f} (target < {TARGET:g})")
    print(f"mcqlens agreement: 1,726 items {', '.join(f'{x:.2f}' for x in runs['agreement_small'])} s; "
          f"RACE {runs['agreement_race'][0]:.2f} s; ratio {agreement_ratio:.2f}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
          f"({os.cpu_count()} CPUs; a loaded machine stretches both sides, not always equally)")

    if not args.no_save:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        now = dt.datetime.now(dt.timezone.utc)
        record = {
            "benchmark": "bench_report", "when": now.isoformat(timespec="seconds"), "commit": commit,
            "machine": {"node": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform(),
                        "processor": platform.processor() or platform.machine(),
                        "python": platform.python_version()},
            "load_average_before": list(load_before), "load_average_after": list(load_after),
            "items": {"small": 1726, "race": 97687},
            "seconds": runs, "import_seconds": imports,
            "ratio_report": report_ratio, "ratio_agreement": agreement_ratio, "target_ratio": TARGET,
        }
        out = ROOT / "docs" / "bench_runs" / f"bench_report_{now:%Y-%m-%d}.json"
        out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
