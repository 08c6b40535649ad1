"""Read-only sources (DREAM, QuAIL, CosmosQA) and format detection, on the real files."""
from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from desktop import formats
from desktop.domain.model import ANSWERABLE, UNANSWERABLE

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


@pytest.mark.parametrize("path,fmt", [
    ("embrace/embrace_green.jsonl", "embrace"), ("embrace/embrace_yellow.jsonl", "embrace"),
    ("expmrc/expmrc-race-dev.json", "expmrc"), ("dream/dev.json", "dream"), ("dream/test.json", "dream"),
    ("quail/quail_1.3_dev.xml", "quail"), ("quail/challenge.jsonl", "quail"),
])
def test_detect_real_files(path, fmt):
    assert formats.detect(DATA / path) == fmt


@pytest.mark.parametrize("split", ["dev", "test"])
def test_dream(split):
    path = DATA / "dream" / f"{split}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    (ds,) = formats.read(path)
    assert [p.id for p in ds.passages] == [d[2] for d in raw]
    qs = list(ds.questions())
    assert len(qs) == sum(len(d[1]) for d in raw)
    for p, d in zip(ds.passages, raw):
        assert p.text.split("\n") == d[0] and p.split == split
        for q, r in zip(p.questions, d[1]):
            assert len(q.alternatives) == 3 and q.alternatives[q.key] == r["answer"]
            assert q.id == f"{p.id}-{q.index}"


def test_quail_dev_xml():
    path = DATA / "quail" / "quail_1.3_dev.xml"
    root = ET.parse(path).getroot()
    (ds,) = formats.read(path)
    assert len(ds.passages) == len(root.findall("text"))
    qs = list(ds.questions())
    assert len(qs) == len(root.findall("text/questions/q"))
    # QuAIL's "Unanswerable" questions are exactly those whose key is "not enough information"
    for q in qs:
        assert len(q.unanswerable_alternatives) == 1
        assert q.alternatives[q.unanswerable_alternatives[0]] == "not enough information"
        expected = UNANSWERABLE if q.extra["question_type"] == "Unanswerable" else ANSWERABLE
        assert q.answerability == expected
    first = root.find("text")
    p = ds.passages[0]
    assert p.id == first.get("id") and p.text == first.find("text_body").text.strip()
    assert p.questions[0].id == f"{p.id}_0" and p.extra["metadata"]["title"] == "Illusion of Luck"


def test_quail_challenge_jsonl():
    path = DATA / "quail" / "challenge.jsonl"
    raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    (ds,) = formats.read(path)
    qs = {q.id: q for q in ds.questions()}
    assert len(qs) == len(raw) and len(ds.passages) == len({r["context_id"] for r in raw})
    for r in raw:
        q = qs[r["id"]]
        assert q.key == int(r["correct_answer_id"]) and q.alternatives == r["answers"]
        assert (q.answerability == UNANSWERABLE) == (r["answers"][q.key] == "not enough information")


def test_cosmosqa_csv(tmp_path):
    rows = [
        {"id": "3Q9-1", "context": "Good Old War and person L : I saw both of these bands Wednesday night.",
         "question": "In the future , will this person go to see other bands play ?",
         "answer0": "None of the above choices .", "answer1": "This person likes music and likes to see the show .",
         "answer2": "This person only likes Good Old War .", "answer3": "Other Bands is not on tour .",
         "label": "1"},
        {"id": "3Q9-2", "context": "Good Old War and person L : I saw both of these bands Wednesday night.",
         "question": "Why did the person go?", "answer0": "a", "answer1": "b", "answer2": "c, with a comma",
         "answer3": "d \"quoted\"", "label": "2"},
        {"id": "3Q9-3", "context": "Another context.\nWith two lines.", "question": "What?", "answer0": "a",
         "answer1": "b", "answer2": "c", "answer3": "d", "label": ""},
    ]
    path = tmp_path / "valid.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert formats.detect(path) == "cosmosqa"
    (ds,) = formats.read(path)
    assert [len(p.questions) for p in ds.passages] == [2, 1]
    qs = list(ds.questions())
    assert [q.id for q in qs] == [r["id"] for r in rows]
    assert [q.key for q in qs] == [1, 2, None]
    assert qs[1].alternatives[3] == 'd "quoted"' and ds.passages[1].text == rows[2]["context"]


def test_detect_jsonl_whose_first_record_is_longer_than_the_sniffed_head(tmp_path):
    rec = json.loads((DATA / "embrace" / "embrace_green.jsonl").read_text(encoding="utf-8").splitlines()[0])
    rec["text"] += " " * 100_000  # pushes "test"/"mcq" past the first 64 KB
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    assert formats.detect(path) == "embrace"
