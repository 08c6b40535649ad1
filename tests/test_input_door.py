"""Validation at the door (issue 16, input side) on the real files of ../shared/data.

What the store accepts, every export can write back; what it cannot, the door refuses with
one `error:` line naming the file (or stdin line), the record and the field, exit 2, and
the database unchanged.  Unedited EMBRACE and ExpMRC exports are the input's bytes.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from desktop import formats
from desktop.cli import main
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
YELLOW = DATA / "embrace" / "embrace_yellow.jsonl"
EXPMRC = DATA / "expmrc" / "expmrc-race-dev.json"
RACE_TEST_HIGH = DATA / "race" / "test" / "high"
RUN = [sys.executable, "-m", "desktop.cli"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def race_files(n: int) -> list[Path]:
    return sorted(RACE_TEST_HIGH.iterdir())[:n]


# ---------------------------------------------------------------- exact to the byte

@pytest.mark.parametrize("source", [GREEN, YELLOW], ids=["green", "yellow"])
def test_unedited_embrace_export_is_the_input_byte_for_byte(source, tmp_path, capsys):
    db, out = tmp_path / "a.db", tmp_path / "out.jsonl"
    assert main(["import", str(source), "--db", str(db)]) == 0
    assert main(["export", "embrace", "--db", str(db), "-o", str(out)]) == 0
    assert out.read_bytes() == source.read_bytes()  # what `cmp` checks


def test_unedited_expmrc_export_keeps_the_input_layout(tmp_path, capsys):
    db, out = tmp_path / "a.db", tmp_path / "out.json"
    assert main(["import", str(EXPMRC), "--db", str(db)]) == 0
    assert main(["export", "expmrc", "--db", str(db), "-o", str(out)]) == 0
    assert out.read_bytes() == EXPMRC.read_bytes()  # indented as the input, keys in its order


def test_a_race_file_exports_to_its_own_bytes(tmp_path, capsys):
    src = tmp_path / "RACE" / "test" / "high"
    src.mkdir(parents=True)
    for f in race_files(3):
        shutil.copy(f, src / f.name)
    db, out = tmp_path / "a.db", tmp_path / "out"
    assert main(["import", str(tmp_path / "RACE"), "--db", str(db)]) == 0
    assert main(["export", "race", "--db", str(db), "-o", str(out)]) == 0
    for f in race_files(3):
        assert (out / "test" / "high" / f.name).read_bytes() == f.read_bytes()


# ---------------------------------------------------------------- annotate: what no export could write

@pytest.fixture()
def green_db(tmp_path) -> Path:
    db = tmp_path / "a.db"
    assert main(["import", str(GREEN), "--db", str(db)]) == 0
    return db


def _annotate(db: Path, lines: list[bytes]) -> list[str]:
    proc = subprocess.run([*RUN, "annotate", "--db", str(db), "--annotator", "anna"], input=b"\n".join(lines) + b"\n",
                          capture_output=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    return proc.stdout.decode("utf-8").splitlines()


def nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_annotate_refuses_values_no_export_could_write(green_db, tmp_path):
    item = json.loads(GREEN.read_text(encoding="utf-8").splitlines()[0])["test"][0]["id"]
    before = sha(green_db)

    def line(field, value):
        return json.dumps({"item": item, "field": field, "value": value}).encode()

    bad = [
        b'{"item": "' + item.encode() + b'", "field": "comment", "value": "caf\xe9"}',  # Latin-1, not UTF-8
        line("comment", "x").replace(b'"x"', b'"\\ud800"'),  # a lone surrogate escape
        line("note", "x").replace(b'"x"', b"1e999"),  # infinity
        line("comment", "x").replace(b'"value": "x"', b'"value": "x", "value": "y"'),  # duplicate key
        line("difficulty.toi", "bogus"),  # a TOI category the scale does not know
        line("difficulty.size", "1"),  # a variable the scale does not have
        line("problem.add", {"type": "bogus", "element": "question"}),  # an unknown problem type
        line("span.add", {"role": "evidence", "start": 0, "end": 3, "extra": [1, 2]}),  # extra not an object
        line("span.add", {"role": "evidence", "start": 0, "end": 3, "extra": {"x": nested(90)}}),  # 90 deep
        line("text_format", "wavy"),  # not a text format of the scale
    ]
    answers = _annotate(green_db, bad)
    assert len(answers) == len(bad) and all(a.startswith(f"error: line {i}: ") for i, a in enumerate(answers, 1)), \
        answers
    for a, word in zip(answers, ["invalid UTF-8", "lone surrogate", "out of range", "duplicate key",
                                 "unknown TOI category 'bogus'", "difficulty.size: unknown field", "unknown problem type",
                                 "extra must be an object", "nested more than", "text_format is one of"]):
        assert word in a, a
    assert sha(green_db) == before  # nothing written
    # the same fields with values of the vocabulary go in, and the export writes them
    good = [line("difficulty.toi", "cause"), line("problem.add", {"type": "spelling_errors", "element": "question"}),
            line("span.add", {"role": "evidence", "start": 0, "end": 3, "extra": {"why": "test"}}),
            line("comment", "café ✓")]
    assert [a.split()[0] for a in _annotate(green_db, good)] == ["ok"] * len(good)
    out = tmp_path / "out.jsonl"
    assert main(["export", "embrace", "--db", str(green_db), "-o", str(out)]) == 0
    assert "café ✓" in out.read_text(encoding="utf-8")


def test_a_span_after_a_nul_character_is_inside_the_passage(tmp_path, capsys):
    rec = json.loads(next(iter(RACE_TEST_HIGH.iterdir())).read_text(encoding="utf-8"))
    rec["article"] = "Before\u0000after. " + rec["article"]
    src = tmp_path / "nul.jsonl"
    src.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    db = tmp_path / "a.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    with Store.open(db) as store:
        (row, *_) = store.items()
        text = store.passage(row.passage_id).text
    end = len(text)  # SQLite's length() stops at the NUL; the passage goes on
    answers = _annotate(db, [json.dumps({"item": row.item_id, "field": "span.add",
                                         "value": {"role": "evidence", "start": 7, "end": end}}).encode()])
    assert answers[0].startswith("ok"), answers
    with Store.open(db) as store:
        (span,) = [s for s in store.question(row.item_id).spans if s.role == "evidence"]
        assert span.text(text).startswith("after.") and span.end == end
    out = tmp_path / "out.jsonl"
    assert main(["export", "race", "--db", str(db), "-o", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["article"] == rec["article"]


# ---------------------------------------------------------------- ids that become file names

def test_race_folder_export_never_writes_outside_and_keeps_every_passage(tmp_path, capsys):
    base = json.loads(next(iter(RACE_TEST_HIGH.iterdir())).read_text(encoding="utf-8"))
    ids = ["../x", "/", "sub/y", "x", "X", "sub", ".hidden", "a b"]
    src = tmp_path / "ids.jsonl"
    src.write_text("".join(json.dumps({**base, "id": i, "article": f"{i}: {base['article']}"}) + "\n" for i in ids),
                   encoding="utf-8")
    db = tmp_path / "a.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    out = tmp_path / "deep" / "out"
    out.parent.mkdir()
    before = set(tmp_path.rglob("*"))
    capsys.readouterr()
    assert main(["export", "race", "--db", str(db), "-o", str(out)]) == 0
    note = capsys.readouterr().out
    created = set(tmp_path.rglob("*")) - before
    assert all(p == out or out in p.parents for p in created)
    written = [p for p in created if p.suffix == ".txt"]
    assert len(written) == len(ids) and not any(p.name.startswith(".") for p in written)
    listed = dict(line.split("\t") for line in (out / "ids.tsv").read_text(encoding="utf-8").splitlines()[1:])
    assert "note:" in note and f"{len(listed)} passage id(s)" in note
    assert set(listed) == {"../x", "/", "X", ".hidden", "a b"}  # the rest are their own file names
    back = [p.id for d in formats.read(out, fmt="race") for p in d.passages]
    assert sorted(back) == sorted(ids)  # every passage comes back under its own id


# ---------------------------------------------------------------- detection and paths

def test_race_options_that_look_like_embrace_keys_stay_race(tmp_path):
    rec = json.loads(next(iter(RACE_TEST_HIGH.iterdir())).read_text(encoding="utf-8"))
    rec["options"][0] = ['"mcq"', '"test"', '"text"', '"evidences"']
    rec["questions"][0] = 'Which key is "data": [ ?'
    for name, text in (("r.txt", json.dumps(rec)), ("r.json", json.dumps([rec])), ("r.jsonl", json.dumps(rec) + "\n")):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert formats.detect(path) == "race", name
        (ds,) = formats.read(path)
        assert ds.passages[0].questions[0].alternatives == rec["options"][0]


def test_race_folder_by_relative_path_readable_ids_and_per_file_records(tmp_path, monkeypatch, capsys):
    src = tmp_path / "RACE" / "test" / "high"
    src.mkdir(parents=True)
    files = race_files(3)
    for f in files:
        shutil.copy(f, src / f.name)
    monkeypatch.chdir(tmp_path / "RACE")
    assert main(["import", ".", "--db", "a.db"]) == 0
    n_questions = sum(len(json.loads(f.read_text(encoding="utf-8"))["questions"]) for f in files)
    with Store.open("a.db") as store:
        ids = [r.item_id for r in store.items()]
        stats = store.stats()
    # RACE's own naming: split/level/number and the question index, j 0-based
    assert ids == [f"test/high/{f.stem}-{j}" for f in files
                   for j in range(len(json.loads(f.read_text(encoding="utf-8"))["questions"]))]
    assert len(ids) == n_questions
    assert sorted(Path(f["file"]).name for f in stats["files"]) == [f.name for f in files]  # each file recorded
    capsys.readouterr()
    assert main(["stats", "--db", "a.db"]) == 0
    assert f". ({len(files)} files)" in capsys.readouterr().out  # one line for the folder
    # export --file finds one file of the folder again
    assert main(["export", "race", "--db", "a.db", "-o", "one", "--file", files[1].name]) == 0
    assert [p.name for p in Path("one").rglob("*.txt")] == [files[1].name]
    # re-importing by another path (absolute, one file of it) adds nothing
    capsys.readouterr()
    assert main(["import", str(tmp_path / "RACE"), str(src / files[0].name), "--db", "a.db"]) == 0
    assert "0 new questions" in capsys.readouterr().out


def test_a_database_with_the_former_race_ids_keeps_them(tmp_path, capsys):
    """Databases imported before readable ids hold "high10001.txt-0": re-importing RACE adds nothing."""
    src = tmp_path / "RACE" / "test" / "high"
    src.mkdir(parents=True)
    for f in race_files(2):
        shutil.copy(f, src / f.name)
    datasets = formats.read(tmp_path / "RACE")
    for d in datasets:  # the former reader's naming: the record's own id
        for p in d.passages:
            p.id = p.extra["former_id"]
            p.extra = {k: v for k, v in p.extra.items() if k not in ("former_id", "readable_id")}
            for q in p.questions:
                q.id, q.passage_id = f"{p.id}-{q.index}", p.id
    db = tmp_path / "old.db"
    with Store.open(db) as store:
        store.import_datasets(datasets)
        old_ids = [r.item_id for r in store.items()]
    assert old_ids[0] == f"high{race_files(1)[0].stem}.txt-0"
    assert main(["import", str(tmp_path / "RACE"), "--db", str(db)]) == 0
    with Store.open(db) as store:
        assert [r.item_id for r in store.items()] == old_ids  # no duplicates, the same ids
    # a RACE file new to that database is named the way the database names RACE
    third = race_files(3)[2]
    shutil.copy(third, src / third.name)
    assert main(["import", str(src / third.name), "--db", str(db)]) == 0
    with Store.open(db) as store:
        assert [r.item_id for r in store.items()][len(old_ids)] == f"high{third.stem}.txt-0"
    out = tmp_path / "out"
    assert main(["export", "race", "--db", str(db), "-o", str(out)]) == 0
    for f in race_files(3):  # the record's id is the file's either way
        assert json.loads(next(out.rglob(f.name)).read_text(encoding="utf-8"))["id"] == f"high{f.stem}.txt"


def _cosmos(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["id", "context", "question", "answer0", "answer1", "answer2", "answer3", "label"])
    w.writerows(rows)
    return buf.getvalue()


def test_cosmosqa_passage_ids_do_not_depend_on_file_order(tmp_path, capsys):
    quail = [json.loads(line) for line in (DATA / "quail" / "challenge.jsonl").read_text(encoding="utf-8").splitlines()]
    contexts = list(dict.fromkeys(r["context"] for r in quail))[:3]
    by_context = {c: [r for r in quail if r["context"] == c] for c in contexts}

    def row(r):
        return [r["id"], r["context"], r["question"], *r["answers"][:4], r["correct_answer_id"]]

    # two files share the second context, each with other questions of it; their first contexts differ
    a = [row(by_context[contexts[0]][0]), row(by_context[contexts[1]][0])]
    b = [row(by_context[contexts[2]][0]), row(by_context[contexts[1]][1])]
    (tmp_path / "a.csv").write_text(_cosmos(a), encoding="utf-8")
    (tmp_path / "b.csv").write_text(_cosmos(b), encoding="utf-8")
    for order in (["a.csv", "b.csv"], ["b.csv", "a.csv"]):
        db = tmp_path / f"{order[0]}.db"
        for name in order:
            assert main(["import", str(tmp_path / name), "--db", str(db)]) == 0
        with Store.open(db) as store:
            assert len(store.items()) == 4
            assert len({r.passage_id for r in store.items()}) == 3  # the shared context is one passage


def test_the_fingerprint_is_of_the_bytes_that_were_read(tmp_path, capsys):
    lines = GREEN.read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "part.jsonl"
    first, second = "".join(lines[:3]), "".join(lines[3:6])
    path.write_text(first, encoding="utf-8")
    datasets = formats.read(path)
    path.write_text(second, encoding="utf-8")  # replaced between the reading and the storing
    db = tmp_path / "a.db"
    with Store.open(db) as store:
        (result,) = store.import_files([(path, datasets)])
    assert result.sha256 == hashlib.sha256(first.encode("utf-8")).hexdigest()
    capsys.readouterr()
    assert main(["import", str(path), "--db", str(db)]) == 0  # the new content is not "already imported"
    out = capsys.readouterr().out
    assert "already imported" not in out and "added 3 passages" in out


def test_a_big_json_lines_file_is_streamed(tmp_path):
    """Reading holds the records, not the file's text (and its lines) besides them."""
    import tracemalloc

    line = GREEN.read_text(encoding="utf-8").splitlines()[0]
    rec = json.loads(line)
    path = tmp_path / "big.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(400):
            fh.write(json.dumps({**rec, "id": f"copy{i}", "test": [{**q, "id": f"copy{i}_{j}"}
                                                                   for j, q in enumerate(rec["test"])]}) + "\n")
    size = path.stat().st_size
    n_lines = 0
    tracemalloc.start()
    try:
        for _ in formats.safe_read.iter_jsonl(path):
            n_lines += 1
            peak = tracemalloc.get_traced_memory()[1]
            if n_lines == 400:
                break
    finally:
        tracemalloc.stop()
    assert n_lines == 400
    assert peak < size / 4, (peak, size)  # the whole text would be at least `size`


def test_import_refuses_an_id_with_a_nul_and_leaves_the_database_alone(green_db, tmp_path, capsys):
    rec = json.loads(next(iter(RACE_TEST_HIGH.iterdir())).read_text(encoding="utf-8"))
    src = tmp_path / "nul_id.jsonl"
    src.write_text(json.dumps({**rec, "id": "a\u0000b"}) + "\n", encoding="utf-8")
    before = sha(green_db)
    capsys.readouterr()
    assert main(["import", str(src), "--db", str(green_db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {src}, record line 1, field id: control character U+0000 at character 1 in the id "
                   "'a\\x00b'"]
    assert sha(green_db) == before
    conn = sqlite3.connect(green_db)
    assert conn.execute("SELECT count(*) FROM passages WHERE id LIKE 'a%b'").fetchone()[0] == 0
    conn.close()


def test_locating_evidence_in_a_huge_article_costs_no_offset_table(tmp_path):
    """Whitespace-insensitive location once kept one Python int per character of the article
    (a 60 MB article: 2.5 GB); now a whitespace-free copy and a number per 64 K characters."""
    import tracemalloc

    article = ("A sentence of the passage, repeated. " * 300_000)[:10_000_000]
    doc = {"version": "x", "data": [{"id": "big", "article": article, "questions": ["Why?"],
                                     "options": [["a", "b", "c", "d"]], "answers": ["B"],
                                     "evidences": [["passage,   repeated.\nA  sentence", "not in the article"]]}]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tracemalloc.start()
    try:
        (ds,) = formats.read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (q,) = list(ds.questions())
    (span,) = q.spans
    assert " ".join(span.text(article).split()) == "passage, repeated. A sentence"
    assert article.startswith("A sentence of the passage") and span.start == article.index("passage,")
    assert peak < 8 * len(article), peak  # an int per character would be 36 bytes each
