"""What docs/models.md is made of: the model card checked against the build's evaluation rows
(`check_card_against_rows`), the per-question N and MI behind the figures, and the run's
other records (`compute`); `wilson`, the one 95% interval of the report and the GPU
evaluation."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from inference.card import load_card
from inference.metrics import effective_options, entropy_bits, softmax
# the report reads the evaluation's statistics; `wilson` stays importable from here for models.report
from models.evaluation.summary import logit_arrays, summarise, wilson  # noqa: F401
from models.report.frontier import frontier
# the run records' places, importable from here for the report's pages
from models.report.run_records import (DEFAULT_RUN, EARLIER_MINILM, EARLIER_MPNET, ROOT, TEACHER_RUN,  # noqa: F401
                                       read_json, read_rows)

FORMATS = ("standard", "shortcut")
NOTATION = {"standard": "C+Q+{O}", "shortcut": "Q+{O}"}
SETS = (("race-test", "RACE test"), ("race-test-high", "RACE test, high"), ("race-test-middle", "RACE test, middle"),
        ("expmrc", "ExpMRC RACE+ dev"), ("embrace", "EMBRACE green + yellow"))
GROUPS = (("race-test", "RACE test"), ("expmrc+embrace", "ExpMRC RACE+ dev + EMBRACE"))


def _close(a: float, b: float, tol: float = 1e-4) -> bool:
    return abs(float(a) - float(b)) <= tol


def check_card_against_rows(card, summary: dict) -> None:
    """The card's evaluation and temperatures are what the rows give; ValueError naming the first difference."""
    ev = card.metrics["evaluation"]["formats"]
    for fmt in FORMATS:
        got, said = summary["formats"][fmt], ev[fmt]
        if not _close(got["temperature"], card.temperature[fmt], 1e-9):
            raise ValueError(f"card temperature {fmt}: {card.temperature[fmt]} but the rows give {got['temperature']}")
        for name, s in said["sets"].items():
            r = got["sets"][name]
            for key in ("accuracy", "ece_before", "ece_after"):
                if r["n"] != s["n"] or not _close(r[key], s[key]):
                    raise ValueError(f"card {fmt} {name} {key}: {s[key]} (n={s['n']}) but the rows give {r[key]} "
                                     f"(n={r['n']})")
            if not all(_close(a, b) for a, b in zip(r["ci95"], s["ci95"])):
                raise ValueError(f"card {fmt} {name} ci95: {s['ci95']} but the rows give {r['ci95']}")
        if "shortcut_n_below_2" in said:
            a, b = said["shortcut_n_below_2"], got["shortcut_n_below_2"]
            if a["n"] != b["n"] or not _close(a["accuracy"], b["accuracy"]):
                raise ValueError(f"card shortcut N < 2: {a} but the rows give {b}")


def _items(rows: list[dict], temperature: dict[str, float]) -> dict:
    """Per question (both formats scored): N, MI and whether each format picks the key, calibrated."""
    by = {f: {r["id"]: r for r in rows if r["format"] == f} for f in FORMATS}
    ids = sorted(set(by["standard"]) & set(by["shortcut"]))
    zs, keys = logit_arrays([by["standard"][i] for i in ids])
    zc, _ = logit_arrays([by["shortcut"][i] for i in ids])
    ps, pc = softmax(zs, temperature["standard"]), softmax(zc, temperature["shortcut"])
    return {"n_std": effective_options(ps), "n_sc": effective_options(pc), "mi": entropy_bits(pc) - entropy_bits(ps),
            "ok_std": ps.argmax(1) == keys, "ok_sc": pc.argmax(1) == keys, "k": np.isfinite(zs).sum(1)}


def compute(model_dir: Path, run_dir: Path) -> dict:
    """Everything docs/models.md shows: the card checked against the float model's rows at the card's
    length, the per-question N and MI, the frontier of the candidates, the recipes, the evidence."""
    card = load_card(model_dir)
    length = card.max_length
    # each format's rows from the files that read it: the card may hand a format to a part, whose
    # float model was evaluated in its own run folder (run_dir / <the part's name>, e.g. shortcut-m6)
    where = {f: run_dir / "eval" for f in FORMATS}
    for fmt in card.readers:
        where[fmt] = run_dir / load_card(Path(model_dir) / card.readers[fmt]).training["run"].split("/")[-1] / "eval"

    def rows_of(name: str) -> list[dict]:
        return [r for f in FORMATS for r in read_rows(where[f] / f"float32_{name}_{length}.jsonl.gz")
                if r["format"] == f]
    dev = rows_of("race-dev")
    evaluated = [r for s in ("race-test", "expmrc", "embrace", "dream", "quail") for r in rows_of(s)]
    summary = summarise(dev, evaluated)
    check_card_against_rows(card, summary)
    items = {"race-test": _items([r for r in evaluated if r["source"] == "race"], card.temperature),
             "expmrc+embrace": _items([r for r in evaluated if r["source"] in ("expmrc", "embrace")], card.temperature)}
    files = sorted((p.name, p.stat().st_size) for p in Path(model_dir).iterdir()
                   if p.is_file() and not p.name.startswith("."))
    for name in sorted(set(card.readers.values())):
        files += sorted((f"{name}/{p.name}", p.stat().st_size) for p in (Path(model_dir) / name).iterdir()
                        if p.is_file() and not p.name.startswith("."))
    return {"card": card, "summary": summary, "items": items, "files": files, "run": run_dir,
            "frontier": frontier(run_dir), "evidence": read_json(run_dir / "expmrc_evidence.json"),
            "evidence_cv": read_json(run_dir / "evidence_cv.json"),
            "students": {d.name: read_json(d / "metrics.json") for d in sorted((run_dir / "students").iterdir())}}
