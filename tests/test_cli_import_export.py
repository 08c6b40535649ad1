"""`mcqlens import / export / stats` on the real EMBRACE and ExpMRC files.

Expected numbers are counted from the input files themselves; the round trip must
give back every EMBRACE line and the ExpMRC document JSON-equal.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.store import Store

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
YELLOW = DATA / "embrace" / "embrace_yellow.jsonl"
EXPMRC = DATA / "expmrc" / "expmrc-race-dev.json"
BAD = Path(__file__).parent / "data" / "bad"

TABLES = ("passages", "questions", "spans", "assessments", "problems", "comments", "answerability",
          "predictions", "history", "datasets", "imports", "dataset_passages")


def embrace_lines(*files: Path) -> list[dict]:
    return [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


def expmrc_doc() -> dict:
    return json.loads(EXPMRC.read_text(encoding="utf-8"))


def counts(db: Path) -> dict[str, int]:
    with Store.open(db, create=False) as store:
        conn = store.db().conn
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "annotations.db"
    assert main(["import", str(GREEN), str(YELLOW), str(EXPMRC), "--db", str(path)]) == 0
    return path


def test_counts_equal_the_files(db):
    green, yellow, doc = embrace_lines(GREEN), embrace_lines(YELLOW), expmrc_doc()
    with Store.open(db, create=False) as store:
        stats = store.stats()
        files = {Path(f["file"]).name: f for f in stats["files"]}
        assert files[GREEN.name]["texts"] == len(green) == 85
        assert files[GREEN.name]["questions"] == sum(len(r["test"]) for r in green) == 200
        assert files[YELLOW.name]["texts"] == len(yellow) == 351
        assert files[YELLOW.name]["questions"] == sum(len(r["test"]) for r in yellow) == 965
        assert files[EXPMRC.name]["texts"] == len(doc["data"]) == 167
        assert files[EXPMRC.name]["questions"] == sum(len(r["questions"]) for r in doc["data"]) == 561
        ids = {t["id"] for r in green + yellow for t in r["test"]}
        ids |= {f"{r['id']}-{j}" for r in doc["data"] for j in range(len(r["questions"]))}
        items = store.items()
        assert {i.item_id for i in items} == ids
        # every evidence reference of the ExpMRC file is one evidence span
        refs = sum(len(e) for r in doc["data"] for e in r["evidences"])
        assert sum(i.n_evidence for i in items if i.source == "expmrc") == refs
        bases = sum(1 for r in green + yellow for t in r["test"] for b in (t["annotations"].get("bases") or {}).values()
                    if b)
        assert sum(i.n_bases for i in items if i.source == "embrace") == bases
        comments = sum(len(t["annotations"].get("comments") or []) for r in green + yellow for t in r["test"])
        assert stats["annotations"]["comments"] == comments
        assert stats["status"]["untouched"] == len(ids)


def test_export_reproduces_every_input(db, tmp_path):
    out = tmp_path / "embrace.jsonl"
    assert main(["export", "embrace", "--db", str(db), "-o", str(out)]) == 0
    assert embrace_lines(out) == embrace_lines(GREEN, YELLOW)
    one = tmp_path / "green.jsonl"
    assert main(["export", "embrace", "--db", str(db), "-o", str(one), "--file", GREEN.name]) == 0
    assert embrace_lines(one) == embrace_lines(GREEN)
    doc = tmp_path / "expmrc.json"
    assert main(["export", "expmrc", "--db", str(db), "-o", str(doc)]) == 0
    assert json.loads(doc.read_text(encoding="utf-8")) == expmrc_doc()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["embrace.jsonl", "expmrc.json", "green.jsonl"]


def test_reimport_changes_nothing(db, tmp_path, capsys):
    before = counts(db)
    copy = tmp_path / "copy.jsonl"  # same bytes under another name
    shutil.copy(GREEN, copy)
    # same content, other bytes: one record per line re-serialised with sorted keys
    resaved = tmp_path / "resaved.jsonl"
    resaved.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in embrace_lines(YELLOW)), encoding="utf-8")
    assert main(["import", str(GREEN), str(EXPMRC), str(copy), str(resaved), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "already imported" in out and "0 new questions" in out
    assert counts(db) == before


def test_conflicting_content_is_refused_and_db_unchanged(db, tmp_path, capsys):
    records = embrace_lines(GREEN)
    records[3]["test"][0]["mcq"]["stem"] += " (edited)"
    qid = records[3]["test"][0]["id"]
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    before, digest = counts(db), sha(db)
    capsys.readouterr()
    assert main(["import", str(changed), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert str(changed) in err[0] and qid in err[0] and "stem" in err[0]
    assert counts(db) == before and sha(db) == digest


BAD_FILES = sorted(p.name for p in BAD.iterdir() if p.name != "expected.json") if BAD.exists() else []


@pytest.fixture(scope="module")
def small_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bad") / "small.db"
    assert main(["import", str(GREEN), "--db", str(path)]) == 0
    return path


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_file_one_error_line_exit_2_db_untouched(small_db, name, capsys):
    digest, before = sha(small_db), counts(small_db)
    capsys.readouterr()
    fmt = name.split("__", 1)[0]
    rc = main(["import", str(BAD / name), "--db", str(small_db), "--format", fmt])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("error: ") and str(BAD / name) in err[0]
    assert sha(small_db) == digest and counts(small_db) == before


def test_bad_file_among_good_ones_imports_nothing(tmp_path, capsys):
    db = tmp_path / "a.db"
    rc = main(["import", str(GREEN), str(BAD / "embrace__key_out_of_range.jsonl"), "--db", str(db)])
    assert rc == 2
    assert not db.exists()  # every file is read before the database is touched
    assert main(["import", str(GREEN), "--db", str(db)]) == 0
    before = counts(db)
    # a conflict found only by the store: yellow itself must not be stored either
    green_again = embrace_lines(GREEN)
    green_again[0]["test"][0]["mcq"]["key"] = "A" if green_again[0]["test"][0]["mcq"]["key"] != "A" else "B"
    conflict = tmp_path / "conflict.jsonl"
    conflict.write_text("".join(json.dumps(r) + "\n" for r in green_again), encoding="utf-8")
    assert main(["import", str(YELLOW), str(conflict), "--db", str(db)]) == 2
    assert counts(db) == before
    assert "field key" in capsys.readouterr().err


def test_export_refuses_existing_target_without_force(db, tmp_path, capsys):
    out = tmp_path / "x.json"
    out.write_text("keep me", encoding="utf-8")
    assert main(["export", "expmrc", "--db", str(db), "-o", str(out)]) == 2
    assert out.read_text(encoding="utf-8") == "keep me"
    assert "--force" in capsys.readouterr().err
    assert main(["export", "expmrc", "--db", str(db), "-o", str(out), "--force"]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == expmrc_doc()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]  # no temporary file left


def test_export_from_missing_db_is_an_error(tmp_path, capsys):
    assert main(["export", "embrace", "--db", str(tmp_path / "none.db"), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "no database" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_csv_one_row_per_question(db, tmp_path):
    import pandas as pd

    out = tmp_path / "items.csv"
    assert main(["export", "csv", "--db", str(db), "-o", str(out)]) == 0
    frame = pd.read_csv(out, keep_default_na=False)
    doc = expmrc_doc()
    assert len(frame) == 200 + 965 + 561
    assert frame["item_id"].is_unique
    keys = dict(zip(frame["item_id"], frame["key"]))
    for r in doc["data"]:
        for j, answer in enumerate(r["answers"]):
            assert keys[f"{r['id']}-{j}"] == answer
    first = doc["data"][0]
    row = frame[frame["item_id"] == f"{first['id']}-0"].iloc[0]
    assert row["evidence"].split(" || ") == first["evidences"][0]
    green = embrace_lines(GREEN)
    q = green[0]["test"][0]
    row = frame[frame["item_id"] == q["id"]].iloc[0]
    assert row["basis_A"] == q["annotations"]["bases"]["a"]["text"]
    assert row["key"] == q["mcq"]["key"]


def test_stats_prints_counts(db, capsys):
    assert main(["stats", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    lines: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.split():
            lines.setdefault(line.split()[0], line.split())  # the table comes before the per-file list
    records, doc = embrace_lines(GREEN, YELLOW), expmrc_doc()
    embrace = [2, len(records), len({r["id"] for r in records}), sum(len(r["test"]) for r in records)]
    expmrc = [1, len(doc["data"]), len({r["id"] for r in doc["data"]}), sum(len(r["questions"]) for r in doc["data"])]
    assert lines["embrace"][1:5] == [str(n) for n in embrace]
    assert lines["expmrc"][1:5] == [str(n) for n in expmrc]
    assert main(["stats", "--db", str(db), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sources"]["expmrc"]["questions"] == 561


def test_race_export_keeps_stem_options_answers(db, tmp_path):
    out = tmp_path / "race.json"
    assert main(["export", "race", "--db", str(db), "-o", str(out), "--source", "expmrc"]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    doc = expmrc_doc()
    assert [{k: r[k] for k in ("id", "article", "questions", "options", "answers")} for r in doc["data"]] == [
        {k: r[k] for k in ("id", "article", "questions", "options", "answers")} for r in written]
    folder = tmp_path / "race"
    assert main(["export", "race", "--db", str(db), "-o", str(folder), "--source", "expmrc"]) == 0
    assert len(list(folder.glob("*.txt"))) == len(doc["data"])
