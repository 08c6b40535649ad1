"""The speed/accuracy frontier of the CPU reader's candidates (docs/models.md), from records alone.

Accuracy per candidate and length:

* the shipped files (`m12`, the 12-layer student: models/default at 384 tokens, models/accurate at
  512): their float model's rows (`eval/float32_*`, what both CPU recipes compute);
* the other students (`m6`, `m3`): the float student's own logits from the training machine
  (`students/<name>/logits_eval.npz`; their int8 storage agreed with them on 98-99% of RACE dev);
* the teacher (the MPNet reader, per-alternative layout, 512 tokens): its card's evaluation;
* the shipped default, ``m12+m6@384``: m12 reads the standard format (and gives the evidence), a
  6-layer student trained again on 2026-11-28 (``shortcut-m6/``) the shortcut format: each
  format's rows from the float model of the files that read it.

Latency: the last `bench_frontier` run record (one question through the product, both formats
without evidence, on the CPU that ran it).  `python -m models.report.frontier` prints the table;
`plot` draws accuracy against milliseconds.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from models.evaluation.summary import summarise
from models.report.run_records import DEFAULT_RUN, ROOT, TEACHER_RUN, read_json, read_rows

LAYERS = {"m12": 12, "m6": 6, "m3": 3}
EVAL = ("race-test", "expmrc", "embrace", "dream", "quail")


def _rows_from_npz(path: Path, length: int, run: Path) -> tuple[list[dict], list[dict]]:
    """(dev rows, evaluation rows) of a student's float logits, labelled like the evaluation rows."""
    z = np.load(path)
    meta = {}
    for s in ("race-dev",) + EVAL:
        for r in read_rows(run / "eval" / f"float32_{s}_384.jsonl.gz"):
            meta[r["id"]] = r
    dev, ev = [], []
    for rid, fmt, role, row in zip(z["ids"], z["formats"], z["roles"], z[f"logits{length}"]):
        m = meta.get(str(rid))
        if m is None:
            continue
        r = {"id": str(rid), "format": str(fmt), "key": m["key"], "source": m["source"], "level": m.get("level"),
             "role": str(role), "logits": [float(x) for x in row if np.isfinite(x)]}
        (dev if r["role"] == "dev" else ev).append(r)
    return dev, ev


def _summary(dev: list[dict], ev: list[dict]) -> dict:
    return summarise(dev, ev)


def _measure(summary: dict) -> dict:
    f = summary["formats"]
    return {"dev": {k: f[k]["dev_accuracy"] for k in ("standard", "shortcut")},
            "test": {k: f[k]["sets"]["race-test"]["accuracy"] for k in ("standard", "shortcut")},
            "test_ci95": {k: f[k]["sets"]["race-test"]["ci95"] for k in ("standard", "shortcut")},
            "ece_after": {k: f[k]["sets"]["race-test"]["ece_after"] for k in ("standard", "shortcut")},
            "n2": f["shortcut"].get("shortcut_n_below_2")}


def latency(runs_dir: Path = ROOT / "docs" / "bench_runs") -> dict:
    """{candidate@length: its latest measurement}: a later run that measured only some candidates
    (the shipped files and the teacher, say, once the others' files were gone) leaves the others'
    rows as their own last run measured them; every row names its record and CPU."""
    out: dict = {}
    for f in sorted(runs_dir.glob("bench_frontier_*.json")):
        run = json.loads(f.read_text())
        for key, c in run["raw"]["candidates"].items():
            out[key] = {**c, "record": f.name, "cpu": run.get("machine", {}).get("cpu"),
                        "cpu_flags": run.get("machine", {}).get("cpu_flags")}
    return out


def frontier(run: Path = DEFAULT_RUN) -> list[dict]:
    lat = latency()
    expmrc = read_json(run / "expmrc_evidence.json") or {}
    out = []
    for name, layers in LAYERS.items():
        for length in (384, 512):
            if name == "m12":
                dev = read_rows(run / "eval" / f"float32_race-dev_{length}.jsonl.gz")
                ev = [r for s in EVAL for r in read_rows(run / "eval" / f"float32_{s}_{length}.jsonl.gz")]
                source = "the shipped files' float model (= both CPU recipes)"
            else:
                dev, ev = _rows_from_npz(run / "students" / name / "logits_eval.npz", length, run)
                source = "the float student (training machine)"
            metrics = read_json(run / "students" / name / "metrics.json")
            key = f"{name}@{length}"
            out.append({"key": key, "name": name, "layers": layers, "max_length": length, "layout": "one-sequence",
                        "parameters": metrics["parameters"], "accuracy_from": source, **_measure(_summary(dev, ev)),
                        "latency": lat.get(key), "expmrc": expmrc.get(key)})
    part = run / "shortcut-m6"  # the shipped default: m12 reads the standard format, a 6-layer student the shortcut
    if (part / "eval" / "float32_race-dev_384.jsonl.gz").is_file():
        main = _summary(read_rows(run / "eval" / "float32_race-dev_384.jsonl.gz"),
                        [r for s in EVAL for r in read_rows(run / "eval" / f"float32_{s}_384.jsonl.gz")])
        sc = _summary(read_rows(part / "eval" / "float32_race-dev_384.jsonl.gz"),
                      [r for s in EVAL for r in read_rows(part / "eval" / f"float32_{s}_384.jsonl.gz")])
        both = {"formats": {"standard": main["formats"]["standard"], "shortcut": sc["formats"]["shortcut"]}}
        m12 = read_json(run / "students" / "m12" / "metrics.json")
        m6 = read_json(part / "metrics.json")
        out.append({"key": "m12+m6@384", "name": "m12+m6", "layers": "12 + 6", "max_length": 384,
                    "layout": "one-sequence", "parameters": m12["parameters"] + m6["parameters"],
                    "accuracy_from": "the shipped files' float models: m12's standard, the part's shortcut",
                    **_measure(both), "latency": lat.get("m12+m6@384"), "expmrc": expmrc.get("m12@384")})
    teacher = read_json(TEACHER_RUN / "card.json")
    if teacher:
        ev = teacher["metrics"]["evaluation"]
        f = ev["formats"]
        out.append({"key": "teacher@512", "name": "teacher", "layers": 12, "max_length": 512,
                    "layout": "per-alternative", "parameters": 109_486_465,
                    "accuracy_from": "its card (the product on a GPU, 2026-11-27)",
                    "dev": {k: f[k]["dev_accuracy"] for k in ("standard", "shortcut")},
                    "test": {k: f[k]["sets"]["race-test"]["accuracy"] for k in ("standard", "shortcut")},
                    "test_ci95": {k: f[k]["sets"]["race-test"]["ci95"] for k in ("standard", "shortcut")},
                    "ece_after": {k: f[k]["sets"]["race-test"]["ece_after"] for k in ("standard", "shortcut")},
                    "n2": f["shortcut"].get("shortcut_n_below_2"), "latency": lat.get("teacher@512"),
                    "expmrc": expmrc.get("teacher@512")})
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for fmt, marker, colour in (("standard", "o", "tab:blue"), ("shortcut", "s", "tab:orange")):
        pts = [(r["latency"]["both_ms"]["p95"], 100 * r["test"][fmt], r["key"]) for r in rows if r.get("latency")]
        if not pts:
            continue
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour,
                   label=f"{fmt} ({'C+Q+{O}' if fmt == 'standard' else 'Q+{O}'})")
        for i, (x, y, key) in enumerate(sorted(pts)):  # neighbours' labels above and below, not on top
            ax.annotate(key, (x, y), textcoords="offset points", xytext=(4, 3 if i % 2 == 0 else -10), fontsize=8)
    teacher = next((r for r in rows if r["name"] == "teacher"), None)
    if teacher:
        for fmt, colour in (("standard", "tab:blue"), ("shortcut", "tab:orange")):
            ax.axhline(100 * teacher["test"][fmt] - 2, color=colour, ls=":", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("one question, both formats, p95 (ms, log scale; the CPU in the run record)")
    ax.set_ylabel("RACE test accuracy (%)")
    ax.set_title("The CPU reader's candidates: accuracy against latency (dotted: 2 points below the teacher)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    for r in frontier():
        print(json.dumps({k: v for k, v in r.items() if k not in ("test_ci95",)}))
