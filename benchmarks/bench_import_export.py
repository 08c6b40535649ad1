"""Import all of ../shared/data/embrace and ../shared/data/expmrc into a fresh database and
export them back; target: each under 2 s on the 2-core development machine.

    python benchmarks/bench_import_export.py [--repeat 3]

Prints the wall-clock figures of the command line as a user runs it (a new process,
start-up included) and of the same work in process, plus the navigator query.
"""
from __future__ import annotations

import argparse
import os
import contextlib
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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.runs import Row, Run, command_line, write
    load_start = os.getloadavg()
    run = Run(benchmark="bench_import_export", command=command_line("bench_import_export.py", argv))
    print(f"files: {', '.join(f.name for f in FILES)} ({sum(f.stat().st_size for f in FILES) / 1e6:.1f} MB)")
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
