"""Every command that reads a user's file reads it through the one door (desktop.formats.door).

The same bad file gives the same one `error:` line (exit 2, nothing written) whichever
command met it: `import`, `merge`, `expmrc evaluate`, `nota make`; the bad files are the
regression files of tests/data/bad and mutations of the real ExpMRC RACE+ dev set.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli import main

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"
DEV = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"
BAD_FILES = sorted(p.name for p in BAD.iterdir() if p.name != "expected.json")


def _one_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize("name", BAD_FILES)
def test_merge_answers_a_bad_file_as_import_does(name, tmp_path, capsys):
    path = BAD / name
    # merge has no --format: both detect it (expmrc__not_object.json, say, is a good RACE file)
    rc = main(["import", str(path), "--db", str(tmp_path / "imported.db")])
    if rc == 0:
        capsys.readouterr()
        assert main(["merge", str(path), "--db", str(tmp_path / "merged.db")]) == 0
        return
    assert rc == 2
    imported = _one_error(capsys)
    assert main(["merge", str(path), "--db", str(tmp_path / "merged.db")]) == 2
    merged = _one_error(capsys)
    assert merged == imported and str(path) in merged
    assert not (tmp_path / "imported.db").exists() and not (tmp_path / "merged.db").exists()


def test_a_reader_slip_is_the_same_line_for_import_merge_and_nota(tmp_path, capsys, monkeypatch):
    """What a reader did not foresee (here a KeyError) is caught at the door, not per command."""
    from desktop.formats import race

    def crashing_reader(rec, file, record, source="race", default_id=None):
        return {}["article"]

    monkeypatch.setattr(race, "passage_from_record", crashing_reader)  # what every RACE reading calls
    src = tmp_path / "race.jsonl"
    rec = json.loads(DEV.read_text(encoding="utf-8"))["data"][0]
    src.write_text(json.dumps({k: rec[k] for k in ("id", "article", "questions", "options", "answers")}) + "\n",
                   encoding="utf-8")
    lines = []
    for argv in (["import", str(src), "--db", str(tmp_path / "a.db")],
                 ["merge", str(src), "--db", str(tmp_path / "b.db")],
                 ["nota", "make", str(src), "-o", str(tmp_path / "nota.json"), "--c", "0.5"]):
        assert main(argv) == 2
        lines.append(_one_error(capsys))
    assert lines[0] == lines[1] == lines[2]
    assert lines[0].startswith(f"error: {src}: unexpected content (KeyError: 'article')")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["race.jsonl"]


# ---------------------------------------------------------------- expmrc evaluate

def _dev() -> dict:
    return json.loads(DEV.read_text(encoding="utf-8"))


def _gold_predictions(doc: dict) -> dict:
    return {f"{s['id']}-{j}": {"answer": s["answers"][j], "evidence": s["evidences"][j][0]}
            for s in doc["data"] for j in range(len(s["questions"]))}


def _without_answers(doc):
    del doc["data"][3]["answers"]
    return "record data[3] (id {id3}), field answers: missing key"


def _evidences_text(doc):
    doc["data"][0]["evidences"] = "the first sentence"
    return "record data[0] (id {id0}), field evidences: expected list, found a string"


def _evidence_list_of_texts(doc):
    doc["data"][1]["evidences"] = [refs[0] for refs in doc["data"][1]["evidences"]]
    return "record data[1] (id {id1}), field evidences[0]: expected list, found a string"


def _reference_number(doc):
    doc["data"][2]["evidences"][1][0] = 7
    return "record data[2] (id {id2}), field evidences[1][0]: expected string, found a number"


def _record_list(doc):
    doc["data"][0] = ["not", "a", "record"]
    return "record data[0]: expected object, found a list"


def _answers_short(doc):
    doc["data"][4]["answers"] = doc["data"][4]["answers"][:-1]
    return "record data[4] (id {id4}), field answers: "


DATASET_CASES = [_without_answers, _evidences_text, _evidence_list_of_texts, _reference_number, _record_list,
                 _answers_short]


@pytest.mark.parametrize("mutate", DATASET_CASES, ids=[f.__name__.strip("_") for f in DATASET_CASES])
def test_evaluate_names_the_record_and_field_of_a_bad_dataset(mutate, tmp_path, capsys):
    doc = _dev()
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps(_gold_predictions(doc)), encoding="utf-8")
    ids = {f"id{i}": doc["data"][i]["id"] for i in range(5)}
    expected = mutate(doc).format(**ids)
    bad = tmp_path / "dataset.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["expmrc", "evaluate", str(bad), str(preds)]) == 2
    line = _one_error(capsys)
    assert line.startswith(f"error: {bad}, {expected}"), line


def test_evaluate_names_the_id_and_field_of_a_bad_prediction(tmp_path, capsys):
    doc = _dev()
    gold = _gold_predictions(doc)
    first = next(iter(gold))
    cases = [({**gold, first: "C"}, f"record {first}: expected object, found a string"),
             ({**gold, first: {"evidence": "x"}}, f"record {first}, field answer: missing key"),
             ({**gold, first: {"answer": 2}}, f"record {first}, field answer: expected string, found a number"),
             ({**gold, first: {"answer": "C", "evidence": ["x"]}},
              f"record {first}, field evidence: expected string, found a list"),
             ([1, 2], "predictions must map")]
    preds = tmp_path / "p.json"
    for rows, expected in cases:
        preds.write_text(json.dumps(rows), encoding="utf-8")
        assert main(["expmrc", "evaluate", str(DEV), str(preds)]) == 2
        line = _one_error(capsys)
        assert line.startswith(f"error: {preds}, {expected}") or line.startswith(f"error: {preds}: {expected}"), line
    # not JSON as the readers take it: a duplicate key, NaN
    preds.write_text('{"%s": {"answer": "A", "answer": "B"}}' % first, encoding="utf-8")
    assert main(["expmrc", "evaluate", str(DEV), str(preds)]) == 2
    assert "duplicate key" in _one_error(capsys)
    preds.write_text('{"%s": {"answer": "A", "score": NaN}}' % first, encoding="utf-8")
    assert main(["expmrc", "evaluate", str(DEV), str(preds)]) == 2
    assert "NaN" in _one_error(capsys)
    # and the gold predictions of the real file still score 100
    preds.write_text(json.dumps(gold), encoding="utf-8")
    assert main(["expmrc", "evaluate", str(DEV), str(preds)]) == 0
    assert json.loads(capsys.readouterr().out)["ALL_F1"] == "100.000"
