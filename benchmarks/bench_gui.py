"""Workbench speed and memory with the real widgets, offscreen, on two databases in ONE run:
the small one (EMBRACE green + yellow, ExpMRC RACE+ dev: 1,726 questions with their spans) and
all of ../shared/data/race (97,687 questions; imported once into a database under /tmp).

Targets (issues 4 and 17):
- window open (store, navigator, first item, first paint) under 1.5 s on both, and on RACE at
  most 1.3x the small database's time measured in the same run;
- peak memory of the whole `mcqlens gui --screenshot` process on RACE at most 100 MB above the
  small database's;
- next item under 50 ms at p95 on both; a search for a word over all of RACE under 100 ms;
  changing a filter under 200 ms.

    python benchmarks/bench_gui.py [--race-db /tmp/mcqlens_bench_race.db] [--steps 300]

Prints the numbers and writes the run to docs/bench_runs/bench_gui_<UTC time>.json (benchmarks/runs.py:
the command, the machine, the load average at the start and the end, every measurement); then
`python benchmarks/render_docs.py` puts it into docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SMALL_FILES = [DATA / "embrace" / "embrace_green.jsonl", DATA / "embrace" / "embrace_yellow.jsonl",
               DATA / "expmrc" / "expmrc-race-dev.json"]
RACE = (DATA / "race").resolve()
SEARCH_WORDS = ("volcano", "dinosaurs", "photosynthesis")  # a search for a word: a few, each once
FILTERS = [("status", "done"), ("status", "not done"), ("acceptability", "unacceptable"),
           ("split", "dev"), ("spans", "has evidence")]
OPEN_REPEATS = 3


def build_small(db: Path) -> int:
    from desktop import formats
    from desktop.store import Store
    with Store.open(db, annotator="imported") as store:
        for f in SMALL_FILES:
            store.import_datasets(formats.read(f), file=f)
        return store.stats()["annotations"]["questions"]


def build_race(db: Path) -> tuple[int, float | None]:
    """All of RACE, imported once (reused while its schema is current)."""
    from desktop.store import SCHEMA_VERSION, Store
    if db.exists():
        with Store.open(db, annotator="imported") as store:
            st = store.stats()
        if st["schema_version"] == SCHEMA_VERSION and st["annotations"]["questions"]:
            return st["annotations"]["questions"], None
        db.unlink()
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "desktop.cli", "import", str(RACE), "--db", str(db)], check=True,
                   cwd=ROOT, capture_output=True)
    seconds = time.perf_counter() - t
    with Store.open(db, annotator="imported") as store:
        return store.stats()["annotations"]["questions"], seconds


def whole_process(db: Path, tmp: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of `mcqlens gui --screenshot` in a process of its own; the peak is
    read by a wrapper process from its children's rusage (the gui process only)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", MCQLENS_SETTINGS=str(tmp / "s.ini"))
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.perf_counter()\n"
             "subprocess.run(sys.argv[1:], check=True, capture_output=True)\n"
             "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "desktop", "--db", str(db),
                          "--annotator", "bench", "--screenshot", str(tmp / "shot.png")],
                         check=True, env=env, cwd=ROOT, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024.0


def open_window(db: Path):
    from desktop.ui.app import application
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow
    app = application()
    t, c = time.perf_counter(), time.process_time()
    window = MainWindow(Backend.open(str(db), annotator="bench"), facts=True)
    window.show()
    app.processEvents()  # first paint
    window.grab()  # everything laid out and painted once
    return time.perf_counter() - t, time.process_time() - c, app, window


def close_window(window) -> None:
    window.facts_runner.wait(60)
    if getattr(window, "model_review", None) is not None:
        window.model_review.stop()
    window.close()
    window.backend.close()


def next_items(app, window, steps: int) -> dict:
    times, cpu = [], []
    for _ in range(steps):
        t, c = time.perf_counter(), time.thread_time()
        if window.navigator.next_item() is None:
            break
        window.passage.viewport().repaint()
        app.processEvents()
        times.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)  # the GUI thread's own CPU time (no other program's)
    times.sort()
    cpu.sort()
    return {"moves": len(times), "median_ms": 1000 * statistics.median(times),
            "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))], "max_ms": 1000 * times[-1],
            "gui_thread_cpu_median_ms": 1000 * statistics.median(cpu),
            "gui_thread_cpu_p95_ms": 1000 * cpu[int(0.95 * (len(cpu) - 1))]}


def queue_idle(app, window, timeout: float = 300.0) -> float | None:
    """Seconds until the model's thread has also scored the items ahead (None: not within `timeout`).
    The search and the filters are timed with it idle: what the model costs beside the window is
    what bench_review_flow measures."""
    t = time.perf_counter()
    while time.perf_counter() - t < timeout:
        app.processEvents()
        snap = window.model_review.worker.snapshot()
        if window.model_review.model is not None and snap["running"] is None and not snap["busy"]:
            return time.perf_counter() - t
        time.sleep(0.05)
    return None


def timed(app, fn) -> float:
    t = time.perf_counter()
    fn()
    app.processEvents()
    return 1000 * (time.perf_counter() - t)


def search_and_filters(app, window) -> dict:
    nav = window.navigator
    out = {"search_ms": {}, "search_hits": {}, "filter_ms": {}}
    for word in SEARCH_WORDS:
        def run(w=word):
            nav.search.setText(w)
            nav.filter_bar._apply_search()
        out["search_ms"][word] = timed(app, run)
        out["search_hits"][word] = nav.nav.counts(nav.filter_bar.query())["total"]
        out.setdefault("clear_search_ms", []).append(timed(app, nav.search.clear))
    for name, value in FILTERS:
        combo = nav.filters[name]
        i = combo.findText(value)
        if i < 0:
            continue
        out["filter_ms"][f"{name}: {value}"] = timed(app, lambda: combo.setCurrentIndex(i))
        out["filter_ms"][f"{name}: any (back)"] = timed(app, lambda: combo.setCurrentIndex(0))
    return out


def machine() -> dict:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"node": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "cpu": cpu}


def write_run(raw: dict, args) -> Path:
    """The run record (benchmarks/runs.py): docs/bench_runs/bench_gui_<UTC time>.json."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.runs import Row, Run, command_line, model_fingerprint, write
    from inference.catalog import locate_model

    med = {k: v["median"] * 1000 for k, v in raw["window_open_s"].items()}
    extra = raw["process"]["race"]["peak_rss_mb"] - raw["process"]["small"]["peak_rss_mb"]
    search = max(raw["search_filters"]["race"]["search_ms"].values())
    filters = {k: max(v["filter_ms"].values()) for k, v in raw["search_filters"].items()}
    nxt = {k: v["p95_ms"] for k, v in raw["next_item"].items()}
    ratio = raw["window_open_ratio"]
    n = raw["questions"]

    def row(label, value, unit, target, ok, detail=""):
        return Row(label=label, value=round(value, 2), unit=unit, target=target, met=bool(ok), detail=detail)

    run = Run(benchmark="bench_gui", command=command_line("bench_gui.py", None), raw=raw)
    run.headline = [
        row("window open, all of RACE over the small database", ratio, "x", "<= 1.3", ratio <= 1.3,
            f"median of {OPEN_REPEATS} opens each, alternating, after a warm-up; {n['race']} vs {n['small']} items"),
        row("window open, small database", med["small"], "ms", "< 1500 ms", med["small"] < 1500,
            "store, navigator, first item, first paint"),
        row("window open, all of RACE", med["race"], "ms", "< 1500 ms", med["race"] < 1500,
            "store, navigator, first item, first paint"),
        row("peak memory of mcqlens gui --screenshot, all of RACE minus small", extra, "MB", "<= 100 MB",
            extra <= 100, "peak RSS of the whole process, read from rusage by a wrapper"),
        row("next item p95, small database", nxt["small"], "ms", "< 50 ms", nxt["small"] < 50,
            "load, redraw passage, question, form, panels, paint"),
        row("next item p95, all of RACE", nxt["race"], "ms", "< 50 ms", nxt["race"] < 50,
            "load, redraw passage, question, form, panels, paint"),
        row("search for a word over all of RACE (slowest word)", search, "ms", "< 100 ms", search < 100,
            "FTS5 hits, counts, first page, paint: " + ", ".join(SEARCH_WORDS)),
        row("changing a filter, small database (slowest change)", filters["small"], "ms", "< 200 ms",
            filters["small"] < 200, "counts, first page, paint"),
        row("changing a filter, all of RACE (slowest change)", filters["race"], "ms", "< 200 ms",
            filters["race"] < 200, "counts, first page, paint"),
    ]
    run.context = [Row(label=f"peak memory of mcqlens gui --screenshot, {k}", value=round(v["peak_rss_mb"], 1),
                       unit="MB", subject=PRODUCT_SUBJECT, detail="the model panel's model included")
                   for k, v in raw["process"].items()]
    for k, v in raw["next_item"].items():
        run.context += [
            Row(label=f"next item, GUI thread CPU time p95, {k}", value=round(v["gui_thread_cpu_p95_ms"], 1),
                unit="ms", subject=PRODUCT_SUBJECT,
                detail="CPU time of the window's thread alone: what a move costs without other programs"),
            Row(label=f"next item, GUI thread CPU time median, {k}", value=round(v["gui_thread_cpu_median_ms"], 1),
                unit="ms", subject=PRODUCT_SUBJECT, detail="the same moves, median"),
            Row(label=f"next item, wall clock median, {k}", value=round(v["median_ms"], 1), unit="ms",
                subject=PRODUCT_SUBJECT, detail="the same moves, median (the headline is their p95)"),
        ]
    run.notes = ["Measured on a 2-core machine shared with other programs: see the load average; "
                 "the ratios are the comparable figures."]
    try:
        run.model = model_fingerprint(locate_model())
    except OSError:
        run.model = None
    return write(run, tuple(raw["load_average_start"]), out_dir=Path(args.out_dir) if args.out_dir else None)


PRODUCT_SUBJECT = "product"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--race-db", default="/tmp/mcqlens_bench_race.db", help="all of RACE (built once, kept)")
    ap.add_argument("--steps", type=int, default=300, help="next-item moves to time on each database")
    ap.add_argument("--out-dir", help="folder of the run file (default docs/bench_runs/)")
    args = ap.parse_args()
    tmp_dir = tempfile.TemporaryDirectory()
    tmp = Path(tmp_dir.name)
    run: dict = {"started": dt.datetime.now().isoformat(timespec="seconds"), "machine": machine(),
                 "load_average_start": os.getloadavg()}
    small = tmp / "small.db"
    dbs = {"small": small, "race": Path(args.race_db)}
    n_small = build_small(small)
    n_race, race_import = build_race(dbs["race"])
    run["questions"] = {"small": n_small, "race": n_race}
    run["race_import_s"] = race_import
    print(f"databases: small {n_small} questions, RACE {n_race} questions"
          + (f" (imported in {race_import:.1f} s)" if race_import else " (reused)"))

    # 1) whole processes, as the annotator starts them: time and peak memory
    procs = {name: whole_process(db, tmp) for name, db in dbs.items()}
    run["process"] = {k: {"seconds": v[0], "peak_rss_mb": v[1]} for k, v in procs.items()}
    extra = procs["race"][1] - procs["small"][1]
    print(f"mcqlens gui --screenshot: small {procs['small'][0]:.2f} s, {procs['small'][1]:.0f} MB peak; "
          f"RACE {procs['race'][0]:.2f} s, {procs['race'][1]:.0f} MB peak; RACE - small = {extra:+.0f} MB   "
          f"target <= +100 MB  {'OK' if extra <= 100 else 'OVER'}")

    # 2) window open in this process, alternating, after one warm-up (imports, fonts)
    *_, app, w = open_window(small)
    close_window(w)
    opens: dict[str, list[float]] = {"small": [], "race": []}
    cpu: dict[str, list[float]] = {"small": [], "race": []}
    for _ in range(OPEN_REPEATS):
        for name, db in dbs.items():
            wall, c, app, w = open_window(db)
            opens[name].append(wall)
            cpu[name].append(c)
            close_window(w)
    med = {k: statistics.median(v) for k, v in opens.items()}
    ratio = med["race"] / med["small"]
    run["window_open_s"] = {k: {"median": med[k], "all": opens[k], "cpu_median": statistics.median(cpu[k])}
                            for k in opens}
    run["window_open_ratio"] = ratio
    print(f"window open (median of {OPEN_REPEATS}): small {med['small'] * 1000:.0f} ms, RACE {med['race'] * 1000:.0f} ms"
          f" (CPU {statistics.median(cpu['small']) * 1000:.0f} / {statistics.median(cpu['race']) * 1000:.0f} ms); "
          f"ratio {ratio:.2f}   targets <= 1.3x and < 1500 ms  "
          f"{'OK' if ratio <= 1.3 and max(med.values()) < 1.5 else 'SLOW'}")

    # 3) next item, search, filters on each database
    run["next_item"], run["search_filters"] = {}, {}
    for name, db in dbs.items():
        _, _, app, w = open_window(db)
        w.facts_runner.wait(60)
        app.processEvents()
        nx = next_items(app, w, args.steps)
        run["next_item"][name] = nx
        print(f"next item on {name} over {nx['moves']} moves: median {nx['median_ms']:.1f} ms, "
              f"p95 {nx['p95_ms']:.1f} ms, max {nx['max_ms']:.1f} ms   target p95 < 50 ms  "
              f"{'OK' if nx['p95_ms'] < 50 else 'SLOW'} (GUI thread CPU: median "
              f"{nx['gui_thread_cpu_median_ms']:.1f} ms, p95 {nx['gui_thread_cpu_p95_ms']:.1f} ms)")
        if getattr(w, "model_review", None) is not None:
            w.model_review.settle()  # the last item's scoring done: time the search, not the worker
            run.setdefault("queue_idle_s", {})[name] = queue_idle(app, w)
        sf = search_and_filters(app, w)
        run["search_filters"][name] = sf
        words = ", ".join(f"{k} {v:.0f} ms ({sf['search_hits'][k]} items)" for k, v in sf["search_ms"].items())
        print(f"search on {name}: {words}   target < 100 ms on RACE"
              + (f"  {'OK' if max(sf['search_ms'].values()) < 100 else 'SLOW'}" if name == "race" else ""))
        worst = max(sf["filter_ms"].values())
        print(f"filter changes on {name}: " + ", ".join(f"{k} {v:.0f} ms" for k, v in sf["filter_ms"].items())
              + f"   target < 200 ms  {'OK' if worst < 200 else 'SLOW'}")
        close_window(w)
    run["load_average_end"] = os.getloadavg()
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in run['load_average_end'])} "
          f"on {os.cpu_count()} cores ({run['machine']['cpu']})")
    write_run(run, args)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # PySide6 6.12 may abort while the interpreter tears its objects down (a 15-line script
    # with a QTreeView does too); the run file is written, so leave without that teardown
    os._exit(code)
