"""Import all of ../shared/data/embrace and ../shared/data/expmrc into a fresh database and
export them back; target: each under 2 s on the 2-core development machine.

    python benchmarks/bench_import_export.py [--repeat 3] [--big-race 500000]

Prints the wall-clock figures of the command line as a user runs it (a new process,
start-up included) and of the same work in process, plus the navigator query.

`--big-race N`: also `mcqlens import` of a file of N RACE questions as
benchmarks/make_big_race.py writes it (RACE's own items repeated under distinct ids; issue 30:
500,000 in at most 60 s and 400 MB), its wall time and the peak resident memory of the process,
and of the process with the one it lints in (desktop/store/lint_ahead.py) summed.
"""
from __future__ import annotations

import argparse
import os
import contextlib
import resource
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
FILES = sorted((DATA / "embrace").glob("*.jsonl")) + sorted((DATA / "expmrc").glob("*.json"))
CLI = [sys.executable, "-c", "import sys; from desktop.cli import main; sys.exit(main())"]


def timed(fn) -> float:
    with contextlib.redirect_stdout(io.StringIO()):  # the commands' summaries are not the figures
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t


def run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def once(tmp: Path, i: int) -> dict[str, float]:
    from desktop.cli import main
    from desktop.store import Store

    out: dict[str, float] = {}
    db = tmp / f"cli{i}.db"
    out["cli import"] = timed(lambda: run([*CLI, "import", *map(str, FILES), "--db", str(db)]))
    out["cli export embrace"] = timed(lambda: run([*CLI, "export", "embrace", "--db", str(db), "-o",
                                                   str(tmp / f"e{i}.jsonl")]))
    out["cli export expmrc"] = timed(lambda: run([*CLI, "export", "expmrc", "--db", str(db), "-o",
                                                  str(tmp / f"x{i}.json")]))
    db2 = tmp / f"inproc{i}.db"
    out["import (in process)"] = timed(lambda: main(["import", *map(str, FILES), "--db", str(db2)]))
    out["export embrace+expmrc (in process)"] = timed(lambda: (
        main(["export", "embrace", "--db", str(db2), "-o", str(tmp / f"e2{i}.jsonl")]),
        main(["export", "expmrc", "--db", str(db2), "-o", str(tmp / f"x2{i}.json")])))
    with Store.open(db2) as s:
        out["items() navigator query"] = timed(s.items)
        out["items(search=...)"] = timed(lambda: s.items(search="teenagers"))
        n = len(s.items())
    same = ([json.loads(x) for f in FILES[:-1] for x in f.read_text(encoding="utf-8").splitlines()]
            == [json.loads(x) for x in (tmp / f"e{i}.jsonl").read_text(encoding="utf-8").splitlines()])
    same &= json.loads(FILES[-1].read_text(encoding="utf-8")) == json.loads((tmp / f"x{i}.json").read_text("utf-8"))
    out["_items"], out["_same"] = n, same
    return out


def big_import(tmp: Path, questions: int) -> dict:
    """`mcqlens import` of `questions` generated RACE questions into a new database, as a user runs it."""
    from benchmarks.make_big_race import write as make_big_race

    src = tmp / "big_race.jsonl"
    made = make_big_race(src, questions, per_passage=40)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen([*CLI, "import", str(src), "--db", str(tmp / "big.db")], stdout=subprocess.DEVNULL,
                            cwd=ROOT)
    together = 0.0  # the import and the processes it starts (its lint's), summed, every 50 ms
    while proc.poll() is None:
        together = max(together, tree_rss_mb(proc.pid) or 0.0)
        time.sleep(0.05)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, proc.args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ru_maxrss of the children: the largest one's peak (KB); the import is the only child since
    # the earlier runs were smaller (its lint process, started from it, counts no more than it
    # had when it was started)
    return {"wall_s": wall, "peak_mb": after.ru_maxrss / 1024, "cpu_s": (after.ru_utime - before.ru_utime)
            + (after.ru_stime - before.ru_stime), "file_mb": made["bytes"] / 1e6, "passages": made["passages"],
            "questions": made["questions"], "peak_together_mb": together or None}


def tree_rss_mb(pid: int) -> float | None:
    """Resident memory of a process and of its descendants together (Linux /proc; None elsewhere)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status", encoding="ascii", errors="replace") as fh:
                total += next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    stack += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            if p == pid:
                return None
    return total / 1024


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs over the EMBRACE and ExpMRC files (0: none)")
    ap.add_argument("--big-race", type=int, default=0, metavar="N",
                    help="also import N generated RACE questions (benchmarks/make_big_race.py)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.runs import Row, Run, command_line, write
    load_start = os.getloadavg()
    run = Run(benchmark="bench_import_export", command=command_line("bench_import_export.py", argv))
    print(f"files: {', '.join(f.name for f in FILES)} ({sum(f.stat().st_size for f in FILES) / 1e6:.1f} MB)")
    if args.big_race:
        with tempfile.TemporaryDirectory() as d:
            big = big_import(Path(d), args.big_race)
        print(f"mcqlens import of {big['questions']:,} generated RACE questions ({big['file_mb']:.1f} MB): "
              f"{big['wall_s']:.1f} s wall, {big['cpu_s']:.1f} s CPU, peak {big['peak_mb']:.0f} MB "
              f"(with its lint process: {big['peak_together_mb'] or float('nan'):.0f} MB)")
        how = (f"benchmarks/make_big_race.py's file of {big['questions']:,} RACE questions under "
               f"{big['passages']:,} passages ({big['file_mb']:.0f} MB of JSON lines), one new process into a new "
               "database, once")
        run.headline.append(Row("mcqlens import, generated RACE questions: wall time", big["wall_s"], "s",
                                target="≤ 60 s (issue 30)", met=big["wall_s"] <= 60, detail=how))
        run.headline.append(Row("mcqlens import, generated RACE questions: peak resident memory", big["peak_mb"],
                                "MB", target="≤ 400 MB (issue 30)", met=big["peak_mb"] <= 400,
                                detail=how + "; ru_maxrss of the process"))
        if big["peak_together_mb"] is not None:
            run.headline.append(Row(
                "mcqlens import, generated RACE questions: peak resident memory, with its lint process",
                big["peak_together_mb"], "MB", target="≤ 400 MB (issue 30)", met=big["peak_together_mb"] <= 400,
                detail=how + "; the resident memory of the import and of the process it lints in, summed, "
                             "read from /proc every 50 ms"))
        run.headline.append(Row("mcqlens import, generated RACE questions: CPU time (user + system)",
                                big["cpu_s"], "s", detail=how + ", its lint process included"))
        run.raw["big_race"] = big
        run.notes.append(f"The big import ran at niceness {os.nice(0)} (0: normal priority) while other programs "
                         "shared the 2 cores: see the load average.")
    if args.repeat <= 0:
        write(run, load_start)
        return
    with tempfile.TemporaryDirectory() as d:
        runs = [once(Path(d), i) for i in range(args.repeat)]
    print(f"questions: {runs[0]['_items']}; exports JSON-equal to the inputs: {all(r['_same'] for r in runs)}")
    for key in runs[0]:
        if key.startswith("_"):
            continue
        values = [r[key] for r in runs]
        unit, scale = ("ms", 1000) if max(values) < 0.1 else ("s", 1)
        print(f"{key:<38} median {statistics.median(values) * scale:8.3f} {unit}   "
              f"max {max(values) * scale:8.3f} {unit}   (n={len(values)})")
        run.raw[key] = values
        med = statistics.median(values)
        how = f"median of {len(values)}, all EMBRACE and ExpMRC files ({runs[0]['_items']} questions)"
        if key.startswith("cli "):  # what the user runs: a new process, start-up included
            run.headline.append(Row(f"mcqlens {key[4:]}", med, "s", target="< 2 s", met=med < 2.0, detail=how))
        else:
            run.headline.append(Row(key, med * 1000, "ms", detail=how))
    run.raw["exports_json_equal_to_inputs"] = all(r["_same"] for r in runs)
    write(run, load_start)


if __name__ == "__main__":
    main()
