"""Evidence marked on any RACE-style item exports as ExpMRC, and the ExpMRC scoring rules read the file.

Issue 24 §3: evidence marked on an imported EMBRACE item, then `mcqlens export expmrc`,
answered "no expmrc items".  Now every passage with evidence is one ExpMRC record (its
questions with evidence, each reference the evidence's passage text), checked here on the real
EMBRACE items of ../shared/data with evidence added through `mcqlens annotate`, with the
official scorer's rules (`desktop.domain.expmrc_metric`, `mcqlens expmrc evaluate`), and on
the real ExpMRC RACE+ dev file, whose export stays its own bytes.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.domain import expmrc_metric
from desktop.domain.model import EVIDENCE, LETTERS
from desktop.formats import expmrc
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
EXPMRC = DATA / "expmrc" / "expmrc-race-dev.json"
RACE_TEST_HIGH = DATA / "race" / "test" / "high"


def annotate(db: Path, annotator: str, lines: list[dict], capsys) -> None:
    from desktop.commands import annotate as command

    class Args:
        pass

    args = Args()
    args.db, args.annotator = str(db), annotator
    out = io.StringIO()
    stdin = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    assert command.run(args, stdin=stdin, stdout=out) == 0, out.getvalue()
    assert all(line.startswith("ok ") for line in out.getvalue().splitlines())


def green_texts() -> list[dict]:
    return [json.loads(line) for line in GREEN.read_text(encoding="utf-8").splitlines()]


def sentence_span(text: str, nth: int = 0) -> tuple[int, int]:
    """The nth sentence of a passage (up to and with its full stop), as a linguist selects it."""
    start = 0
    for _ in range(nth):
        start = text.index(". ", start) + 2
    return start, text.index(".", start) + 1


@pytest.fixture()
def green_db(tmp_path, capsys) -> Path:
    db = tmp_path / "a.db"
    assert main(["import", str(GREEN), "--db", str(db)]) == 0
    capsys.readouterr()
    return db


def test_evidence_on_embrace_items_exports_as_expmrc_and_the_scorer_reads_it(green_db, tmp_path, capsys):
    texts = green_texts()
    t0, t1 = texts[0], texts[1]
    # tester marks two sentences of text 0 as the evidence of its first question and one of its
    # third; anna marks one of text 1's second question; nothing else has evidence
    e00, e01 = sentence_span(t0["text"], 0), sentence_span(t0["text"], 2)
    e02, e11 = sentence_span(t0["text"], 1), sentence_span(t1["text"], 3)
    q00, q02, q11 = t0["test"][0]["id"], t0["test"][2]["id"], t1["test"][1]["id"]
    annotate(green_db, "tester", [
        {"item": q00, "field": "span.add", "value": {"role": "evidence", "start": e00[0], "end": e00[1]}},
        {"item": q00, "field": "span.add", "value": {"role": "evidence", "start": e01[0], "end": e01[1]}},
        {"item": q02, "field": "span.add", "value": {"role": "evidence", "start": e02[0], "end": e02[1]}},
    ], capsys)
    annotate(green_db, "anna", [
        {"item": q11, "field": "span.add", "value": {"role": "evidence", "start": e11[0], "end": e11[1]}},
    ], capsys)
    out = tmp_path / "evidence.json"
    assert main(["export", "expmrc", "--db", str(green_db), "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"{out}: 3 questions")
    doc = json.loads(out.read_text(encoding="utf-8"))
    # articles grouped by passage: text 0 with its questions 0 and 2 (question 2 moved up: its
    # own record id), text 1 with its question 1
    assert [r["id"] for r in doc["data"]] == [f"{t0['id']}~0.2", f"{t1['id']}~1"]
    assert [r["question_ids"] for r in doc["data"]] == [[q00, q02], [q11]]
    r0, r1 = doc["data"]
    assert r0["article"] == t0["text"] and r1["article"] == t1["text"]
    assert r0["questions"] == [t0["test"][0]["mcq"]["stem"], t0["test"][2]["mcq"]["stem"]]
    assert r0["options"][0] == [c[4:] for c in t0["test"][0]["mcq"]["choices"]]  # "(A) " is EMBRACE's prefix
    assert r0["answers"] == [t0["test"][0]["mcq"]["key"], t0["test"][2]["mcq"]["key"]]
    # evidence as passage text: one reference per annotator, her spans in passage order
    text0 = t0["text"]
    assert r0["evidences"] == [[f"{text0[slice(*e00)]} {text0[slice(*e01)]}"], [text0[slice(*e02)]]]
    assert r1["evidences"] == [[t1["text"][slice(*e11)]]]

    # the official rules read the file: gold answers and references score 100 on all measures
    gold = {f"{r['id']}-{j}": {"answer": r["answers"][j], "evidence": r["evidences"][j][0]}
            for r in doc["data"] for j in range(len(r["questions"]))}
    assert expmrc_metric.score_multiple_choice(doc, gold) == {
        "ALL_F1": "100.000", "ANS_F1": "100.000", "EVI_F1": "100.000", "TOTAL": 3, "SKIP": 0}
    preds = tmp_path / "gold.json"
    preds.write_text(json.dumps(gold), encoding="utf-8")
    assert main(["expmrc", "evaluate", str(out), str(preds)]) == 0
    assert json.loads(capsys.readouterr().out)["ALL_F1"] == "100.000"
    # a wrong answer and only the first sentence of q00's evidence: the official arithmetic
    key = r0["answers"][0]
    wrong = {**gold, f"{r0['id']}-0": {"answer": LETTERS[(LETTERS.index(key) + 1) % 4], "evidence": text0[slice(*e00)]}}
    f1 = expmrc_metric.evidence_f1(text0[slice(*e00)], r0["evidences"][0])
    assert 0 < f1 < 1
    got = expmrc_metric.score_multiple_choice(doc, wrong)
    assert got["ANS_F1"] == f"{100 * 2 / 3:.3f}" and got["EVI_F1"] == f"{100 * (2 + f1) / 3:.3f}"
    assert got["ALL_F1"] == f"{100 * 2 / 3:.3f}"

    # and our own ExpMRC reader takes the file back: every reference located exactly
    (ds,) = __import__("desktop.formats", fromlist=["read"]).read(out)
    # one annotator's two sentences are one reference, not a stretch of the text: kept unlocated, never dropped
    assert ds.extra["counts"] == {"exact": 2, "whitespace": 0, "unlocated": 1}
    assert main(["import", str(out), "--db", str(tmp_path / "again.db")]) == 0


def test_a_passage_whose_first_questions_have_evidence_keeps_its_ids(tmp_path, capsys):
    """RACE items are "<passage id>-<j>", as ExpMRC names them: where nothing moved, the same."""
    src = sorted(RACE_TEST_HIGH.iterdir())[0]
    rec = json.loads(src.read_text(encoding="utf-8"))
    db = tmp_path / "a.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    with Store.open(db, read_only=True) as store:
        first = store.items()[0].item_id
    span = sentence_span(rec["article"])
    annotate(db, "tester", [{"item": first, "field": "span.add",
                             "value": {"role": "evidence", "start": span[0], "end": span[1]}}], capsys)
    out = tmp_path / "e.json"
    assert main(["export", "expmrc", "--db", str(db), "-o", str(out)]) == 0
    (record,) = json.loads(out.read_text(encoding="utf-8"))["data"]
    assert f"{record['id']}-0" == first and record["question_ids"] == [first]
    assert record["answers"] == [rec["answers"][0]] and record["evidences"] == [[rec["article"][slice(*span)]]]


def test_a_model_suggestion_is_no_evidence_and_nothing_to_export_is_said(green_db, tmp_path, capsys):
    q = green_texts()[0]["test"][0]["id"]
    with Store.open(green_db) as store:
        from desktop.domain.changes import Change

        store.apply(Change(q, "span.add", {"role": EVIDENCE, "start": 0, "end": 10, "origin": "model"}, "model"))
        assert any(s.role == EVIDENCE for s in store.question(q).spans)
    out = tmp_path / "e.json"
    assert main(["export", "expmrc", "--db", str(green_db), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: no expmrc items and no item with evidence in {green_db}: mark evidence (E) first"]
    assert not out.exists()


def test_the_expmrc_file_with_embrace_evidence_beside_it(tmp_path, capsys):
    """The real RACE+ dev file exports to its own records, unchanged; EMBRACE evidence comes after."""
    db = tmp_path / "a.db"
    assert main(["import", str(EXPMRC), str(GREEN), "--db", str(db)]) == 0
    out = tmp_path / "only.json"
    assert main(["export", "expmrc", "--db", str(db), "-o", str(out)]) == 0
    assert out.read_bytes() == EXPMRC.read_bytes()  # no evidence on EMBRACE yet: the file itself
    t0 = green_texts()[0]
    span = sentence_span(t0["text"])
    annotate(db, "tester", [{"item": t0["test"][0]["id"], "field": "span.add",
                             "value": {"role": "evidence", "start": span[0], "end": span[1]}}], capsys)
    both = tmp_path / "both.json"
    assert main(["export", "expmrc", "--db", str(db), "-o", str(both)]) == 0
    original = json.loads(EXPMRC.read_text(encoding="utf-8"))
    doc = json.loads(both.read_text(encoding="utf-8"))
    assert doc["version"] == original["version"] and doc["data"][:-1] == original["data"]
    assert doc["data"][-1]["id"] == str(t0["id"]) and doc["data"][-1]["evidences"] == [[t0["text"][slice(*span)]]]
    gold = {f"{r['id']}-{j}": {"answer": r["answers"][j], "evidence": r["evidences"][j][0]}
            for r in doc["data"] for j in range(len(r["questions"]))}
    assert expmrc_metric.score_multiple_choice(doc, gold)["TOTAL"] == 562
    assert expmrc.check_scorable(doc, str(both)) is doc
