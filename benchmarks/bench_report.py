"""Time `mcqlens report` over all of ../shared/data/embrace (target: under 10 s).

Prints wall-clock and CPU seconds of each stage, measured in this run: import the
files into a fresh database, load it back, and write the report.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "embrace"


def main() -> int:
    t0, c0 = time.perf_counter(), time.process_time()
    from desktop.cli import main as cli
    from desktop.formats import read
    from desktop.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "embrace.db"
        with Store.open(db) as store:
            store.import_datasets(read(DATA / "embrace_green.jsonl") + read(DATA / "embrace_yellow.jsonl"))
        t1, c1 = time.perf_counter(), time.process_time()
        rc = cli(["report", "--db", str(db), "-o", str(Path(tmp) / "report")])
        t2, c2 = time.perf_counter(), time.process_time()
    print(f"import into a fresh database: {t1 - t0:.2f} s wall, {c1 - c0:.2f} s CPU")
    print(f"mcqlens report (load + items + figures + html): {t2 - t1:.2f} s wall, {c2 - c1:.2f} s CPU")
    return rc


if __name__ == "__main__":
    sys.exit(main())
