"""`mcqlens report` over EMBRACE's released files: items.csv, figures, index.html."""
from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.domain import difficulty as D
from desktop.domain import typology as T
from desktop.formats import read
from desktop.reports.corpus_report import write_report

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "embrace"
REQUIRED = ["item_id", "toi", "tom", "nphr", "ni", "nit", "npar", "ic", "pod", "toc", "total", "eligible",
            "acceptability", "text_acceptability", "question_acceptability", "alternatives_acceptability",
            "acceptability_with_suggestions"]


def _questions_in_files() -> dict[str, str]:
    out = {}
    for colour in ("green", "yellow"):
        for line in open(DATA / f"embrace_{colour}.jsonl", encoding="utf-8"):
            for q in json.loads(line)["test"]:
                out[q["id"]] = colour
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    datasets = read(DATA / "embrace_green.jsonl") + read(DATA / "embrace_yellow.jsonl")
    summary = write_report(datasets, out)
    with open(out / "items.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return out, summary, rows


def test_items_csv_has_one_row_per_question_and_the_columns(report):
    _, _, rows = report
    assert set(REQUIRED) <= set(rows[0])
    colours = _questions_in_files()
    assert sorted(r["item_id"] for r in rows) == sorted(colours)
    for r in rows:
        assert r["eligible"] in ("True", "False")
        for col in ("acceptability", "text_acceptability", "question_acceptability",
                    "alternatives_acceptability", "acceptability_with_suggestions"):
            assert r[col] in T.ACCEPTABILITY


def test_total_is_the_sum_of_the_points_columns(report):
    _, _, rows = report
    for r in rows:
        if r["total"]:
            assert float(r["total"]) == pytest.approx(sum(float(r[v] or 0) for v in D.VARIABLES))
            assert D.THEORETICAL_MIN <= float(r["total"]) <= D.THEORETICAL_MAX


def test_acceptability_reproduces_the_file_colours(report):
    _, summary, rows = report
    colours = _questions_in_files()
    want = {"green": T.ACCEPTABLE, "yellow": T.MAINLY}
    for colour in want:
        mine = [r for r in rows if colours[r["item_id"]] == colour]
        from_tags = sum(r["acceptability"] == want[colour] for r in mine)
        with_sugg = sum(r["acceptability_with_suggestions"] == want[colour] for r in mine)
        assert from_tags >= 0.95 * len(mine) and with_sugg >= 0.95 * len(mine), colour
        assert summary["colour_agreement"][colour]["with_suggestions"] == with_sugg


def test_index_lists_every_exception_with_its_reason(report):
    out, summary, rows = report
    page = (out / "index.html").read_text(encoding="utf-8")
    mismatched = {r["item_id"] for r in rows if r["acceptability_with_suggestions"] !=
                  {"green": T.ACCEPTABLE, "yellow": T.MAINLY}[r["file_colour"]]}
    assert mismatched == {x["item_id"] for x in summary["exceptions"] if x["basis"] == "with suggestions"}
    for x in summary["exceptions"]:
        assert f"<td>{x['item_id']}</td>" in page and x["why"]
    with open(out / "exceptions.csv", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == len(summary["exceptions"])


def test_statistics_are_as_computed_and_the_page_says_so(report):
    out, summary, rows = report
    evaluated = [float(r["total"]) for r in rows
                 if r["eligible"] == "True" and r["total"] and r["text_format"] == "continuous"]
    st = summary["evaluated"]
    assert st["n"] == len(evaluated)
    assert st["mean"] == pytest.approx(statistics.mean(evaluated))
    assert st["median"] == statistics.median(evaluated)
    assert st["mode"] in statistics.multimode(evaluated)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert f"{st['mean']:.2f}" in page and "13.09" in page and "about one" in page


def test_figures_are_pngs_embedded_in_the_page(report):
    out, summary, _ = report
    page = (out / "index.html").read_text(encoding="utf-8")
    assert len(summary["figures"]) == 10
    for name in summary["figures"]:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{name}"' in page


def test_command_line_reads_the_database(tmp_path):
    from desktop.store import Store

    db = tmp_path / "a.db"
    with Store.open(db) as store:
        store.import_datasets(read(DATA / "embrace_green.jsonl"))
    assert main(["report", "--db", str(db), "-o", str(tmp_path / "r")]) == 0
    with open(tmp_path / "r" / "items.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == sum(1 for c in _questions_in_files().values() if c == "green")
    assert {r["acceptability"] for r in rows} == {T.ACCEPTABLE}
    assert main(["report", "--db", str(tmp_path / "missing.db"), "-o", str(tmp_path / "x")]) == 2


EXPMRC = DATA.parent / "expmrc" / "expmrc-race-dev.json"


def test_items_nobody_reviewed_are_their_own_class_and_the_page_reads_like_the_terminal(tmp_path, capsys):
    """EMBRACE green (reviewed: assessed, tags recorded) and ExpMRC dev (evidence only: nobody
    judged acceptability).  The ExpMRC questions are "not reviewed", never "acceptable"; Fig. 3
    leaves them out; the linter table has no "None"; the mode reads the same in the terminal
    and on the page."""
    from desktop.reports.corpus_items import NOT_REVIEWED
    from desktop.store import Store

    n_expmrc = sum(len(p["questions"]) for p in json.load(open(EXPMRC, encoding="utf-8"))["data"])
    n_green = sum(1 for c in _questions_in_files().values() if c == "green")
    db = tmp_path / "a.db"
    with Store.open(db) as store:
        store.import_datasets(read(DATA / "embrace_green.jsonl"), file=str(DATA / "embrace_green.jsonl"))
        store.import_datasets(read(EXPMRC), file=str(EXPMRC))
    capsys.readouterr()
    assert main(["report", "--db", str(db), "-o", str(tmp_path / "r")]) == 0
    terminal = capsys.readouterr().out
    with open(tmp_path / "r" / "items.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    by_source = {}
    for r in rows:
        by_source.setdefault(r["source"], []).append(r)
    assert len(by_source["expmrc"]) == n_expmrc == 561 and len(by_source["embrace"]) == n_green
    for r in by_source["expmrc"]:
        assert r["reviewed"] == "False"
        for col in ("acceptability", "text_acceptability", "mcq_unit_acceptability", "acceptability_with_suggestions"):
            assert r[col] == NOT_REVIEWED
    assert {r["acceptability"] for r in by_source["embrace"]} == {T.ACCEPTABLE}
    assert f"{n_green} reviewed" in terminal

    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert f"<tr><td>{NOT_REVIEWED}</td><td>{n_expmrc}</td></tr>" in page
    assert "None" not in page
    with open(tmp_path / "r" / "lint.csv", encoding="utf-8") as fh:
        lint = list(csv.DictReader(fh))
    assert any(r["recall"] == "" and r["recorded units"] == "0" for r in lint)  # undefined: left empty

    evaluated = [float(r["total"]) for r in rows if r["eligible"] == "True" and r["total"]
                 and r["text_format"] == "continuous"]
    modes = ", ".join(f"{m:g}" for m in sorted(statistics.multimode(evaluated)))
    assert f"mode {modes}\n" in terminal
    assert f"<td>{modes}</td></tr><tr><td>all eligible" in page
