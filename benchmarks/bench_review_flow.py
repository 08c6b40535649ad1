"""Nobody waits for the model (issue 29): the real window, offscreen, on unscored RACE dev items,
with a scripted annotator who stays `--dwell` seconds on each item and then moves on with
Ctrl+Enter (mark done, next unfinished), while the model's queue scores ahead of them.

Measured:
- the share of moves after the second on which the stored probabilities are on screen within
  100 ms of the move (target ≥ 90% on the development machine at 30 s per item);
- the time from opening an unscored item to its probabilities and to its evidence (p50, p95):
  the items the walk meets unscored, and `--jumps` jumps to unscored items far ahead;
- the GUI thread's move time p95 with the queue busy (target ≤ 50 ms, as in bench_gui): the walk's
  moves that met the queue at work, and a quick walk after the jumps (`--busy-moves` moves
  `--busy-dwell` s apart, so that the queue is still scoring when the next move comes); and a
  search and a filter change with the queue busy (bench_gui's targets: < 100 ms, < 200 ms).

    python benchmarks/bench_review_flow.py [--model DIR] [--dwell 30] [--items 30] [--ahead 5]
        [--jumps 5] [--busy-moves 20] [--busy-dwell 1] [--out-dir DIR]

The database is RACE dev (../shared/data/race/dev, imported once into a temporary folder);
the walk starts at its first item.  Prints the numbers and writes the run record
(benchmarks/runs.py) to docs/bench_runs/bench_review_flow_<UTC time>.json (or --out-dir);
`python benchmarks/render_docs.py` puts it into docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.runs import Row, Run, command_line, model_fingerprint, write  # noqa: E402

RACE_DEV = (ROOT.parent / "shared" / "data" / "race" / "dev").resolve()
ON_SCREEN_MS = 100.0
SHARE_TARGET = 90.0
MOVE_TARGET_MS = 50.0
SEARCH_WORDS = ("volcano", "dinosaurs", "photosynthesis")
FILTERS = [("status", "done"), ("status", "not done"), ("spans", "has evidence")]
TICK_S = 0.005


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))] if xs else None


class Walk:
    """The annotator and what they see, polled every few milliseconds."""

    def __init__(self, app, window, model_dir: str):
        self.app, self.w, self.mr = app, window, window.model_review
        self.model_dir = model_dir
        self.moves: list[dict] = []
        self.unscored: list[dict] = []  # items opened without their probabilities stored

    def has_probs(self) -> bool:
        v = self.mr.view
        return v is not None and {"standard", "shortcut"} <= set(v.formats)

    def has_evidence(self) -> bool:
        v = self.mr.view
        return v is not None and not v.evidence_pending and self.has_probs()

    def pump(self, seconds: float, until=None) -> float | None:
        """Process events for `seconds`; the time `until()` first held (None: never)."""
        t0 = time.perf_counter()
        while True:
            self.app.processEvents()
            now = time.perf_counter()
            if until is not None and until():
                return now - t0
            if now - t0 >= seconds:
                return None
            time.sleep(TICK_S)

    def move(self, how) -> dict:
        """One move; the GUI thread's time for it and whether the numbers were there."""
        snap = self.mr.worker.snapshot()
        busy = snap["running"] is not None or snap["busy"] or snap.get("batch") is not None
        before = self.w.current
        t0, c0 = time.perf_counter(), time.thread_time()
        how()
        self.w.passage.viewport().repaint()
        self.app.processEvents()
        move_ms = 1000 * (time.perf_counter() - t0)
        cpu_ms = 1000 * (time.thread_time() - c0)
        shown = self.has_probs()
        waited = 0.0 if shown else self.pump((ON_SCREEN_MS - move_ms) / 1000, self.has_probs)
        on_screen = shown or (waited is not None)
        return {"from": before, "item": self.w.current, "move_ms": move_ms, "gui_cpu_ms": cpu_ms,
                "queue_busy": busy, "on_screen_100ms": on_screen,
                "on_screen_ms": move_ms if shown else (None if waited is None else move_ms + 1000 * waited)}

    def stay(self, dwell: float, opened: dict) -> None:
        """Stay `dwell` seconds; for an item opened unscored, when its stages arrive."""
        t0 = time.perf_counter()
        probs_at = 0.0 if opened["on_screen_100ms"] else None
        evidence_at = 0.0 if self.has_evidence() else None
        while time.perf_counter() - t0 < dwell:
            self.app.processEvents()
            now = time.perf_counter() - t0 + opened["move_ms"] / 1000
            if probs_at is None and self.has_probs():
                probs_at = now
            if evidence_at is None and self.has_evidence():
                evidence_at = now
            time.sleep(TICK_S)
        if not opened["on_screen_100ms"]:
            self.unscored.append({"item": opened["item"], "probabilities_s": probs_at, "evidence_s": evidence_at,
                                  "within_dwell": dwell})


def build_db(folder: Path) -> tuple[Path, float]:
    db = folder / "race-dev.db"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "desktop.cli", "import", str(RACE_DEV), "--db", str(db)], check=True,
                   cwd=ROOT, capture_output=True)
    return db, time.perf_counter() - t


def ctrl_enter(app, window):
    """Ctrl+Enter as the window handles it: the key's action (offscreen no widget has the keyboard
    focus a key event would need), so the benchmark needs no Qt of its own."""
    return window.go_menu.done_and_next_action.trigger


def search_and_filters(walk) -> dict:
    """A search and filter changes while the queue scores (bench_gui's measure, on this database)."""
    nav, app = walk.w.navigator, walk.app
    out = {"search_ms": {}, "filter_ms": {}, "queue_busy": []}

    def timed(fn):
        snap = walk.mr.worker.snapshot()
        out["queue_busy"].append(snap["running"] is not None)
        t = time.perf_counter()
        fn()
        app.processEvents()
        return 1000 * (time.perf_counter() - t)

    for word in SEARCH_WORDS:
        def run(w=word):
            nav.search.setText(w)
            nav.filter_bar._apply_search()
        out["search_ms"][word] = timed(run)
        walk.pump(0.3)
        timed(nav.search.clear)
        walk.pump(0.3)
    for name, value in FILTERS:
        combo = nav.filters.get(name)
        i = combo.findText(value) if combo is not None else -1
        if i < 0:
            continue
        out["filter_ms"][f"{name}: {value}"] = timed(lambda: combo.setCurrentIndex(i))
        walk.pump(0.3)
        out["filter_ms"][f"{name}: any (back)"] = timed(lambda: combo.setCurrentIndex(0))
        walk.pump(0.3)
    return out


def run_walk(args, db: Path) -> dict:
    from desktop.ui.app import application
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    os.environ["MCQLENS_MODEL"] = str(args.model)
    os.environ["MCQLENS_SCORE_AHEAD"] = str(args.ahead)
    app = application()
    t0 = time.perf_counter()
    window = MainWindow(Backend.open(str(db), annotator="bench"), facts=True)
    window.resize(1366, 768)
    window.show()
    app.processEvents()
    walk = Walk(app, window, str(args.model))
    mr = window.model_review
    loaded = walk.pump(600, lambda: mr.model is not None or mr.model_error is not None)
    if mr.model_error:
        raise SystemExit(f"no model: {mr.model_error}")
    raw: dict = {"model_load_s": loaded, "window_open_s": time.perf_counter() - t0 - (loaded or 0)}
    first = {"from": None, "item": window.current, "move_ms": 0.0, "gui_cpu_ms": 0.0, "queue_busy": True,
             "on_screen_100ms": walk.has_probs(), "on_screen_ms": None}
    walk.stay(args.dwell, first)
    press = ctrl_enter(app, window)
    for k in range(args.items - 1):
        m = walk.move(press)
        m["n"] = k + 1
        walk.moves.append(m)
        print(f"move {k + 1}: {m['item']} {m['move_ms']:.1f} ms, numbers on screen: "
              f"{'yes' if m['on_screen_100ms'] else 'no'}; {mr.queue_control.model_state.text()}", flush=True)
        walk.stay(args.dwell, m)
    raw["search_filters"] = search_and_filters(walk)
    # jumps to unscored items far ahead: the time to their probabilities and evidence
    ids = window.navigator.visible_items()
    here = ids.index(window.current) if window.current in ids else 0
    jumps = []
    for j in range(args.jumps):
        target = ids[min(len(ids) - 1, here + 200 * (j + 1))]
        m = walk.move(lambda t=target: window.go_to(t))
        t_probs = 0.0 if m["on_screen_100ms"] else walk.pump(300, walk.has_probs)
        t_ev = walk.pump(300, walk.has_evidence)
        jumps.append({"item": target, "move_ms": m["move_ms"], "queue_busy": m["queue_busy"],
                      "probabilities_s": None if t_probs is None else t_probs + m["move_ms"] / 1000,
                      "evidence_s": None if t_ev is None else (t_probs or 0) + t_ev + m["move_ms"] / 1000})
        print(f"jump {j + 1}: {target} probabilities {jumps[-1]['probabilities_s']} s, "
              f"evidence {jumps[-1]['evidence_s']} s", flush=True)
    # a quick walk on from the last jump, `--busy-dwell` s per item: at 30 s per item the queue has
    # caught up before every move (a fast model is idle by then), so this is where the GUI thread's
    # moves meet the model's thread at work
    busy_moves = []
    for k in range(args.busy_moves):
        walk.pump(args.busy_dwell)
        m = walk.move(press)
        m["n"] = k + 1
        busy_moves.append(m)
        print(f"quick move {k + 1}: {m['item']} {m['move_ms']:.1f} ms, queue busy: "
              f"{'yes' if m['queue_busy'] else 'no'}", flush=True)
    raw.update({"moves": walk.moves, "first_item": walk.unscored[:1], "unscored_in_walk": walk.unscored,
                "jumps": jumps, "busy_moves": busy_moves, "computed": [list(x) for x in mr.worker.queue.computed]})
    window.facts_runner.wait(60)
    window.close()
    mr.stop(120)
    window.backend.close()
    return raw


def write_run(raw: dict, args, load_start) -> Path:
    moves = raw["moves"]
    counted = [m for m in moves if m["n"] > 2]  # the moves after the second
    share = 100.0 * sum(m["on_screen_100ms"] for m in counted) / len(counted) if counted else None
    quick = raw.get("busy_moves", [])
    busy = sorted(m["move_ms"] for m in moves + quick if m["queue_busy"])
    busy_cpu = sorted(m["gui_cpu_ms"] for m in moves + quick if m["queue_busy"])
    busy_walk = sum(m["queue_busy"] for m in moves)
    opened = [u for u in raw["unscored_in_walk"][1:] + raw["jumps"]]  # the first item waits for the load too
    probs = [u["probabilities_s"] * 1000 for u in opened if u["probabilities_s"] is not None]
    ev = [u["evidence_s"] * 1000 for u in opened if u["evidence_s"] is not None]
    sf = raw["search_filters"]
    search = max(sf["search_ms"].values()) if sf["search_ms"] else None
    filt = max(sf["filter_ms"].values()) if sf["filter_ms"] else None
    at_30 = abs(args.dwell - 30) < 1e-9
    how = (f"{len(moves) + 1} RACE dev items, {args.dwell:g} s on each, Ctrl+Enter; {args.ahead} items ahead; "
           f"the real window offscreen at 1366x768")

    def row(label, value, unit, target=None, ok=None, detail=how):
        return Row(label=label, value=None if value is None else round(value, 2), unit=unit, target=target,
                   met=None if target is None or value is None else bool(ok), detail=detail)

    run = Run(benchmark="bench_review_flow", command=command_line("bench_review_flow.py", None), raw=raw)
    run.headline = [
        row(f"moves after the second with the stored probabilities on screen within {ON_SCREEN_MS:.0f} ms",
            share, "%", f"≥ {SHARE_TARGET:.0f}% (at 30 s per item)" if at_30 else None,
            share is not None and share >= SHARE_TARGET,
            how + f"; {len(counted)} moves counted" + ("" if at_30 else " (not the target's 30 s)")),
        row("opening an unscored item: its probabilities, p50", pct(probs, 50), "ms",
            detail=f"{len(probs)} items opened unscored (in the walk after the first, and {len(raw['jumps'])} jumps "
                   "to items far ahead), from the move to the bars"),
        row("opening an unscored item: its probabilities, p95", pct(probs, 95), "ms", detail="the same items"),
        row("opening an unscored item: its evidence, p50", pct(ev, 50), "ms",
            detail="the same items, from the move to the evidence's outline"),
        row("opening an unscored item: its evidence, p95", pct(ev, 95), "ms", detail="the same items"),
        row("GUI thread: move p95 with the queue busy", pct(busy, 95), "ms", f"≤ {MOVE_TARGET_MS:.0f} ms",
            busy and pct(busy, 95) <= MOVE_TARGET_MS,
            f"{len(busy)} moves while the model's thread was scoring ({busy_walk} in the walk, {len(busy) - busy_walk} "
            f"in a quick walk of {len(quick)} moves {args.busy_dwell:g} s apart after the jumps); a move is "
            "Ctrl+Enter: the edit (mark done), then load, redraw, panels, paint (bench_gui times next item without "
            "the edit)"),
        row("search for a word, RACE dev, queue busy (slowest word)", search, "ms", "< 100 ms",
            search is not None and search < 100, "FTS5 hits, counts, first page, paint: " + ", ".join(SEARCH_WORDS)),
        row("changing a filter, RACE dev, queue busy (slowest change)", filt, "ms", "< 200 ms",
            filt is not None and filt < 200, "counts, first page, paint"),
    ]
    first = raw["first_item"][0] if raw["first_item"] else None
    run.context = [
        Row(label="model load in the window", value=round(raw["model_load_s"] or 0, 2), unit="s",
            detail="from the window's first paint to the model loaded in its thread"),
        Row(label="GUI thread: move median with the queue busy", value=round(statistics.median(busy), 2) if busy else None,
            unit="ms", detail="the same moves, median"),
        Row(label="GUI thread: CPU time per move p95 with the queue busy",
            value=round(pct(busy_cpu, 95), 2) if busy_cpu else None, unit="ms",
            detail="the GUI thread's own CPU time for the same moves (without the waits for other programs)"),
        Row(label="GUI thread: move p95, every move", value=round(pct([m["move_ms"] for m in moves], 95), 2)
            if moves else None, unit="ms", detail="all moves of the walk, the queue busy or caught up"),
        Row(label="stages the model computed during the run", value=len(raw["computed"]), unit="",
            detail="probabilities, evidence and give-away words, each item once"),
    ]
    if first is not None and first["probabilities_s"] is not None:
        run.context.append(Row(label="first item: its probabilities after the model loaded",
                               value=round(first["probabilities_s"] * 1000), unit="ms",
                               detail="the walk's first item, timed from the window's open (the load included)"))
    run.notes = [f"The annotator's dwell time is {args.dwell:g} s (`--dwell`); the issue's target is stated for 30 s.",
                 "Measured on a machine shared with other programs: see the load average."]
    run.model = model_fingerprint(args.model)
    return write(run, load_start, out_dir=Path(args.out_dir) if args.out_dir else None)


def main() -> int:
    from inference.catalog import locate_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(locate_model()), help="model directory (default: the shipped one)")
    ap.add_argument("--dwell", type=float, default=30.0, help="seconds the annotator stays on each item (default 30)")
    ap.add_argument("--items", type=int, default=30, help="items the annotator walks through (default 30)")
    ap.add_argument("--ahead", type=int, default=5, help="items the model scores ahead (the window's setting)")
    ap.add_argument("--jumps", type=int, default=5, help="jumps to unscored items far ahead, after the walk")
    ap.add_argument("--busy-moves", type=int, default=20,
                    help="moves of a quick walk after the jumps, timed while the queue scores (default 20)")
    ap.add_argument("--busy-dwell", type=float, default=1.0, help="seconds between the quick walk's moves (default 1)")
    ap.add_argument("--out-dir", help="folder of the run file (default docs/bench_runs/)")
    args = ap.parse_args()
    load_start = os.getloadavg()
    tmp = tempfile.TemporaryDirectory()
    os.environ["MCQLENS_SETTINGS"] = str(Path(tmp.name) / "settings.ini")
    db, import_s = build_db(Path(tmp.name))
    print(f"RACE dev imported in {import_s:.1f} s; model {args.model}; dwell {args.dwell:g} s; "
          f"{args.items} items, {args.ahead} ahead", flush=True)
    raw = run_walk(args, db)
    raw["import_s"] = import_s
    path = write_run(raw, args, load_start)
    from benchmarks.runs import Run  # noqa: F401 - printed below from the record
    import json
    for r in json.loads(path.read_text(encoding="utf-8"))["headline"]:
        print(f"{r['label']}: {r['value']} {r['unit']}  target {r['target'] or '-'}  "
              f"{'' if r['met'] is None else ('met' if r['met'] else 'NOT met')}")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # PySide6 may abort while tearing its objects down (bench_gui.py says why)
