"""docs/models.md is regenerated from the model card and the build's run records, and its numbers
are what the evaluation rows give."""
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from inference.card import card_from_json, load_card
from models.report import models_md as report

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "models" / "default"
sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="module")
def res():
    return report.compute(DEFAULT, report.DEFAULT_RUN)


def test_wilson_interval_matches_the_closed_form():
    # Wilson (1927) score interval for 0 of 10 has lower bound 0 and upper z²/(n+z²)
    lo, hi = report.wilson(0, 10)
    z = 1.959964
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(z * z / (10 + z * z))
    # the textbook value for 50 of 100: [0.4038, 0.5962]
    lo, hi = report.wilson(50, 100)
    assert (lo, hi) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))


def test_the_cards_evaluation_is_what_the_rows_give_and_a_wrong_figure_is_refused(res):
    # compute() already checked the card against the rows; recomputed here for RACE test
    s = res["summary"]["formats"]
    n = s["standard"]["sets"]["race-test"]["n"]
    k = round(s["standard"]["sets"]["race-test"]["accuracy"] * n)
    lo, hi = report.wilson(k, n)
    assert n == 4934 and res["card"].metrics["evaluation"]["formats"]["standard"]["sets"]["race-test"]["ci95"] == \
        [pytest.approx(lo, abs=1e-4), pytest.approx(hi, abs=1e-4)]
    data = json.loads((DEFAULT / "card.json").read_text(encoding="utf-8"))
    data["metrics"]["evaluation"]["formats"]["shortcut"]["sets"]["embrace"]["accuracy"] += 0.01
    with pytest.raises(ValueError, match="shortcut embrace accuracy"):
        report.check_card_against_rows(card_from_json(data), res["summary"])
    data = json.loads((DEFAULT / "card.json").read_text(encoding="utf-8"))
    data["temperature"]["standard"] = 1.0
    with pytest.raises(ValueError, match="temperature standard"):
        report.check_card_against_rows(card_from_json(data), res["summary"])


def test_docs_models_md_is_what_the_report_writes(res, tmp_path):
    from benchmarks import render_docs
    from benchmarks.runs import load_all

    shutil.copy(ROOT / "docs" / "models_gpu_build.md", tmp_path / "models_gpu_build.md")
    text = report.write_markdown(res, tmp_path)
    text = render_docs.replace_block(text, "bench:summary", render_docs.render_block(load_all()))
    assert text == (ROOT / "docs" / "models.md").read_text(encoding="utf-8"), \
        "docs/models.md differs: run python -m models.report, then python benchmarks/render_docs.py"
    ev = load_card(DEFAULT).metrics["evaluation"]["formats"]
    race = ev["standard"]["sets"]["race-test"]
    assert f"| RACE test | 4,934 | {100 * race['accuracy']:.1f} [{100 * race['ci95'][0]:.1f}, " in text
    # the frontier names every candidate, and what misses the issue's targets says so
    for key in ("m12@384", "m12@512", "m6@384", "m3@512", "teacher@512"):
        assert f"| {key} |" in text
    assert "| ECE after temperature on RACE test | ≤ 3% in each format |" in text


def test_what_the_issue_asks_of_the_files_holds_or_is_said_not_to(res):
    rows = {what: (measured, met) for what, _, measured, met in report.targets(res)}
    n2 = res["summary"]["formats"]["shortcut"]["shortcut_n_below_2"]  # from the rows
    assert rows["shortcut N < 2 on RACE test"] == (f"{n2['n']} questions, {100 * n2['accuracy']:.1f}% right",
                                                   n2["n"] >= 250 and n2["accuracy"] >= 0.8)
    teacher = res["card"].training["teacher"]["race_test"]
    for fmt in ("standard", "shortcut"):
        acc = res["summary"]["formats"][fmt]["sets"]["race-test"]["accuracy"]
        assert rows[f"RACE test, {fmt}"][1] is (acc >= teacher[fmt] - 0.02)
    ece = max(res["summary"]["formats"][f]["sets"]["race-test"]["ece_after"] for f in ("standard", "shortcut"))
    assert rows["ECE after temperature on RACE test"][1] is (ece <= 0.03)
    assert rows["model files"][1] is True
    kept = res["card"].extra["quantization"]["runtime"]
    assert rows["CPU recipe int8x2 against the float model, RACE dev, argmax agreement"][1] is ("int8x2" in kept)


def test_the_frontier_is_what_the_records_give(res):
    rows = {r["key"]: r for r in res["frontier"]}
    card = res["card"].metrics["evaluation"]["formats"]
    # the default: m12's standard format, its 6-layer part's shortcut format
    assert rows["m12@384"]["test"]["standard"] == card["standard"]["sets"]["race-test"]["accuracy"]
    for fmt in ("standard", "shortcut"):
        assert rows["m12+m6@384"]["test"][fmt] == card[fmt]["sets"]["race-test"]["accuracy"]
    assert rows["teacher@512"]["test"] == res["card"].training["teacher"]["race_test"] or \
        abs(rows["teacher@512"]["test"]["standard"] - 0.670) < 0.0006
    # fewer layers read worse: the frontier is monotone in the standard format at each length
    for length in (384, 512):
        acc = [rows[f"{m}@{length}"]["test"]["standard"] for m in ("m3", "m6", "m12")]
        assert acc == sorted(acc)


def test_figures_are_drawn(res, tmp_path):
    from models.report.frontier import plot

    report.figure4(res["items"], tmp_path / "f4.png")
    report.figure5(res["items"], tmp_path / "f5.png")
    plot(res["frontier"], tmp_path / "f6.png")
    for f in ("f4.png", "f5.png", "f6.png"):
        assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mi, groups = report.mi_groups(res["items"]["race-test"])
    assert len(mi) == 4934 and np.all(np.isfinite(mi)) and np.all(np.abs(mi) <= 2.0)
    assert not math.isnan(groups[-1][1])
    # as in the seed, the standard system is most accurate where the passage removes most uncertainty
    assert groups[-1][1] > groups[0][1]
