"""docs/benchmarks.md is what the run files in docs/bench_runs give, and only the shipped model's
own path may say "met" (issue 18)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import render_docs  # noqa: E402
from benchmarks.runs import PRODUCT, RUNS, Row, load_all, shipped_fingerprint  # noqa: E402


def test_every_generated_file_is_what_the_runs_give():
    for path, text in render_docs.outputs().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.relative_to(ROOT)} differs from the run files: run python benchmarks/render_docs.py")


def test_every_table_row_of_the_docs_comes_from_a_run_file():
    doc = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    runs = load_all()
    labels = {r["label"] for run in runs for r in run["headline"] + run["context"]}
    rows = [ln for ln in doc.splitlines() if ln.startswith("| ") and not ln.startswith("| ---")]
    headers = {"benchmark", "headline", "context (not the product's path)"}
    body = [ln.split(" | ") for ln in rows if ln[2:].split(" | ")[0] not in headers]
    assert body, "the docs hold no figure at all"
    for cells in body:
        first = cells[0][2:]
        label = cells[1] if first in {run["benchmark"] for run in runs} else first
        assert label.replace("\\|", "|") in labels, f"row without a run behind it: {' | '.join(cells)}"
    # every run file named on the page exists
    for name in re.findall(r"docs/bench_runs/([\w.-]+\.json)", doc):
        assert (RUNS / name).is_file(), name


def test_met_only_on_the_shipped_model_s_own_path():
    shipped = shipped_fingerprint()
    latest = render_docs.latest(load_all())
    assert latest, "no run files"
    for name, runs in latest.items():
        run = runs[0]
        for row in run["context"]:
            assert row.get("met") is None, f"{name}: context row says met: {row['label']}"
        for row in run["headline"]:
            if row.get("met") is None:
                continue
            assert row["subject"] == PRODUCT, f"{name}: {row['label']}"
            model = run.get("model")
            if model:  # a model was involved: it must be the one shipped now
                assert model.get("shipped") and model.get("sha256") == shipped, (
                    f"{name} ({run['_file']}): '{row['label']}' says met/not met on a model that is not the "
                    "shipped one: measure it again")


def test_a_stand_in_cannot_carry_met():
    with pytest.raises(ValueError):
        Row("random weights", 1.0, "ms", subject="stand-in: random weights", target="< 2 ms", met=True)
    with pytest.raises(ValueError):
        Row("no target", 1.0, "ms", met=True)


def test_run_files_are_strict_json():
    for p in RUNS.glob("*.json"):
        json.loads(p.read_text(encoding="utf-8"), parse_constant=lambda c: pytest.fail(f"{p.name}: {c}"))
