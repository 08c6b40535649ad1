"""Reading and writing speed of the format modules on the real files (prints figures).

    python benchmarks/bench_formats.py
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop import formats  # noqa: E402

DATA = ROOT / ".." / "shared" / "data"


def timed(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(argv=None) -> None:
    from benchmarks.runs import Row, Run, command_line, write
    load_start = os.getloadavg()
    run = Run(benchmark="bench_formats", command=command_line("bench_formats.py", argv))
    tmp = Path(tempfile.mkdtemp())
    files = [("embrace", p) for p in sorted((DATA / "embrace").glob("*.jsonl"))]
    files.append(("expmrc", DATA / "expmrc" / "expmrc-race-dev.json"))

    def read_all():
        return [(fmt, formats.read(p)[0]) for fmt, p in files]

    t_read, sets = timed(read_all)

    def write_all():
        for i, (fmt, ds) in enumerate(sets):
            formats.write(fmt, ds, tmp / f"{i}.{'jsonl' if fmt == 'embrace' else 'json'}")

    t_write, _ = timed(write_all)
    n_q = sum(len(list(ds.questions())) for _, ds in sets)
    print(f"embrace+expmrc: {n_q} questions, read {t_read * 1000:.0f} ms, write {t_write * 1000:.0f} ms, "
          f"total {(t_read + t_write) * 1000:.0f} ms (median of 5)")
    run.headline += [Row("read all EMBRACE + ExpMRC files", t_read * 1000, "ms", detail=f"{n_q} questions, median of 5"),
                     Row("write them back", t_write * 1000, "ms", detail="median of 5")]
    counts = sets[-1][1].extra["counts"]
    print(f"expmrc evidence references: {counts}")
    for rel in ("dream/train.json", "dream/dev.json", "quail/quail_1.3_dev.xml", "quail/challenge.jsonl"):
        t, (ds,) = timed(lambda: formats.read(DATA / rel), repeat=3)
        print(f"{rel}: {len(list(ds.questions()))} questions, read {t * 1000:.0f} ms")
        run.headline.append(Row(f"read {rel}", t * 1000, "ms", detail=f"{len(list(ds.questions()))} questions, median of 3"))
    article = ("A sentence of the passage, repeated. " * 300_000)[:10_000_000]
    big = tmp / "big.json"
    big.write_text(json.dumps({"version": "x", "data": [{
        "id": "big", "article": article, "questions": ["Why?"], "options": [["a", "b"]], "answers": ["A"],
        "evidences": [[article[5_000_000:5_000_200], "no such sentence anywhere"]]}]}))
    t, _ = timed(lambda: formats.read(big), repeat=1)
    print(f"10 MB passage with one located and one unlocated reference: read {t * 1000:.0f} ms")
    run.headline.append(Row("read a 10 MB ExpMRC passage with one located and one unlocated reference", t * 1000, "ms"))
    write(run, load_start)


if __name__ == "__main__":
    main()
