"""`mcqlens nota make` on real files: the RACE output reads back and says what was replaced."""
import json
from pathlib import Path

import pytest

from desktop import formats
from desktop.cli import main
from desktop.commands.nota import parse_cs
from desktop.domain import nota

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
EXPMRC = SHARED / "expmrc" / "expmrc-race-dev.json"
QUAIL = SHARED / "quail" / "challenge.jsonl"


def test_make_expmrc_with_replicas(tmp_path):
    out = tmp_path / "nota.json"
    assert main(["nota", "make", str(EXPMRC), "-o", str(out), "--c", "0.3", "--seed", "1",
                 "--replicas", "5"]) == 0
    source = {r["id"]: r for r in json.loads(EXPMRC.read_text(encoding="utf-8"))["data"]}
    records = json.loads(out.read_text(encoding="utf-8"))
    assert len(records) == 5 * len(source)  # ExpMRC dev is held-out data: 5 copies
    by_replica = {}
    for rec in records:
        original = source[rec["nota"]["original_id"]]
        assert rec["id"] == f"{original['id']}.r{rec['nota']['replica']}"
        for j, opts in enumerate(rec["options"]):
            r = "ABCDE".index(rec["replaced"][j])
            assert opts[r] == nota.NOTA_TEXT and opts.count(nota.NOTA_TEXT) == 1
            assert rec["replaced_text"][j] == original["options"][j][r]
            key = "ABCDE".index(original["answers"][j])
            assert rec["answers"][j] == original["answers"][j]  # the key keeps its place
            assert rec["answerable"][j] == (r != key)
            by_replica.setdefault(rec["nota"]["replica"], []).append(rec["answerable"][j])
    # 561 × 0.3 = 168.3 → 168 unanswerable in every replica
    assert {r: v.count(False) for r, v in by_replica.items()} == {r: 168 for r in range(1, 6)}
    # the output is RACE: it reads back through the formats package, fields intact
    [ds] = formats.read(out)
    assert sum(1 for _ in ds.questions()) == 5 * 561
    assert ds.passages[0].extra["record"]["replaced"] == records[0]["replaced"]


def test_same_seed_same_file(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    for path, seed in ((a, "4"), (b, "4"), (c, "5")):
        assert main(["nota", "make", str(EXPMRC), "-o", str(path), "--c", "0.5", "--seed", seed,
                     "--replicas", "1"]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_quail_and_transformed_files_are_refused(tmp_path, capsys):
    # QuAIL already has its "not enough information" alternative; a made file already has NOTA
    assert main(["nota", "make", str(QUAIL), "-o", str(tmp_path / "q.json"), "--c", "0.3"]) == 2
    assert "not enough information" in capsys.readouterr().err
    made = tmp_path / "m.json"
    assert main(["nota", "make", str(EXPMRC), "-o", str(made), "--c", "0.3", "--replicas", "1"]) == 0
    assert main(["nota", "make", str(made), "-o", str(tmp_path / "mm.json"), "--c", "0.3"]) == 2
    assert "transformed before" in capsys.readouterr().err


def test_quail_key_not_enough_information_imports_as_unanswerable():
    # counted independently from the file: correct_answer_id points at "not enough information"
    rows = [json.loads(line) for line in QUAIL.read_text(encoding="utf-8").splitlines() if line.strip()]
    expected = sum(r["answers"][int(r["correct_answer_id"])].strip().lower() == "not enough information"
                   for r in rows)
    questions = [q for ds in formats.read(QUAIL) for q in ds.questions()]
    assert len(questions) == len(rows)
    assert sum(q.answerability == "unanswerable" for q in questions) == expected == 66
    assert all(len(q.unanswerable_alternatives) == 1 for q in questions)


def test_c_lists():
    assert parse_cs("0,0.1,...,1") == ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"]
    assert parse_cs("0.3,0.5") == ["0.3", "0.5"]
    import argparse
    with pytest.raises(argparse.ArgumentTypeError):
        parse_cs("0,0.3,...,1")
    with pytest.raises(argparse.ArgumentTypeError):
        parse_cs("0,1.5")


def test_make_from_the_database(tmp_path):
    from desktop.store import Store

    db = tmp_path / "annotations.db"
    store = Store.open(db, annotator="anna")
    store.import_datasets(formats.read(EXPMRC), file=str(EXPMRC))
    store.close()
    out = tmp_path / "from_db.jsonl"
    assert main(["nota", "make", "--db", str(db), "-o", str(out), "--c", "0.1", "--replicas", "1"]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sum(len(r["answerable"]) for r in records) == 561
    assert sum(a is False for r in records for a in r["answerable"]) == 56  # 56.1 → 56
    assert main(["nota", "make", "--db", str(tmp_path / "none.db"), "-o", str(out), "--c", "0.1"]) == 2
