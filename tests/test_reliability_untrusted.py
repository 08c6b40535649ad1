"""Untrusted files through `mcqlens import`: no code runs, no path outside the chosen file
or folder is read (or written on export), and memory is bounded on huge or endless inputs."""
from __future__ import annotations

import ast
import json
import os
import pickle
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from desktop.cli import main
from desktop import formats
from desktop.formats import safe_read

ROOT = Path(__file__).resolve().parents[1]
EXPMRC = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


def _race_records(n: int, start: int = 0) -> list[dict]:
    """RACE records: the ExpMRC-RACE entries without their evidence annotation."""
    data = json.loads(EXPMRC.read_text(encoding="utf-8"))["data"][start:start + n]
    return [{k: r[k] for k in ("id", "article", "questions", "options", "answers")} for r in data]


def _counts(db: Path) -> tuple[int, int]:
    conn = sqlite3.connect(db)
    try:
        return (conn.execute("SELECT count(*) FROM passages").fetchone()[0],
                conn.execute("SELECT count(*) FROM questions").fetchone()[0])
    finally:
        conn.close()


# ---------------------------------------------------------------- no code execution

_FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__"}
_FORBIDDEN_METHODS = {"system", "popen", "spawnv", "execv", "load_module", "exec_module", "unsafe_load"}
_FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "yaml", "subprocess", "dill", "runpy", "importlib.util"}


@pytest.mark.parametrize("module", sorted(p.name for p in (ROOT / "desktop" / "formats").glob("*.py"))
                         + ["../commands/import_.py"])
def test_readers_contain_no_way_to_run_code(module):
    tree = ast.parse((ROOT / "desktop" / "formats" / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in _FORBIDDEN_BUILTINS, f"{module}:{node.lineno} calls {node.func.id}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            assert node.func.attr not in _FORBIDDEN_METHODS, f"{module}:{node.lineno} calls .{node.func.attr}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if getattr(node, "module", None) else [])
            assert not _FORBIDDEN_MODULES & set(names), f"{module}:{node.lineno} imports {names}"


def test_payloads_in_files_stay_text(tmp_path, capsys):
    mark = tmp_path / "PWNED"
    records = _race_records(2)
    payloads = [f"__import__('os').system('touch {mark}')", f"$(touch {mark})", f"`touch {mark}`",
                "{{7*7}} ${7*7} %(x)s"]
    records[0]["questions"][0] = payloads[0]
    records[0]["options"][0] = payloads[1:] + [records[0]["options"][0][-1]]
    records[1]["article"] = payloads[3] + " " + records[1]["article"]
    src = tmp_path / "payloads.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    db = tmp_path / "a.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    assert not mark.exists()
    conn = sqlite3.connect(db)
    stems = [r[0] for r in conn.execute("SELECT stem FROM questions ORDER BY rowid")]
    conn.close()
    assert stems[0] == payloads[0]  # stored as the text it is
    out = tmp_path / "back.jsonl"
    assert main(["export", "race", "--db", str(db), "-o", str(out)]) == 0
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == records
    assert not mark.exists()


def test_a_pickle_disguised_as_json_is_refused_not_loaded(tmp_path, capsys):
    mark = tmp_path / "PWNED"

    class Boom:
        def __reduce__(self):
            return (os.system, (f"touch {mark}",))

    evil = tmp_path / "train.json"
    evil.write_bytes(pickle.dumps(Boom()))
    assert main(["import", str(evil), "--format", "race", "--db", str(tmp_path / "a.db")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {evil}")
    assert not mark.exists()


def test_xml_entities_are_refused(tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("the contents of a private file", encoding="utf-8")
    xxe = tmp_path / "xxe.xml"
    xxe.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM "file://{secret}">]>\n'
                   '<data><text id="t1" domain="news"><text_body>&x;</text_body></text></data>\n', encoding="utf-8")
    laughs = tmp_path / "laughs.xml"
    ents = "".join(f'<!ENTITY l{i} "{"&l%d;" % (i - 1) * 10 if i else "lol"}">' for i in range(10))
    laughs.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE d [{ents}]>\n<data>&l9;</data>\n', encoding="utf-8")
    for f in (xxe, laughs):
        db = tmp_path / f"{f.stem}.db"
        assert main(["import", str(f), "--db", str(db)]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"error: {f}, record line 2: DOCTYPE/ENTITY declarations are not accepted", err
        assert not db.exists() or _counts(db) == (0, 0)


# ---------------------------------------------------------------- no path outside the chosen folder

def test_links_out_of_the_folder_are_not_followed(tmp_path, capsys):
    inside, outside = tmp_path / "race", tmp_path / "outside"
    (inside / "high").mkdir(parents=True)
    outside.mkdir()
    mine = _race_records(3)
    for r in mine:
        (inside / "high" / f"{r['id']}.txt").write_text(json.dumps(r), encoding="utf-8")
    stranger = _race_records(2, start=10)
    for r in stranger:
        (outside / f"{r['id']}.txt").write_text(json.dumps(r), encoding="utf-8")
    (inside / "high" / "linked_file.txt").symlink_to(outside / f"{stranger[0]['id']}.txt")
    (inside / "linked_dir").symlink_to(outside, target_is_directory=True)
    (inside / "high" / "alias.txt").symlink_to(inside / "high" / f"{mine[0]['id']}.txt")  # inside: fine
    db = tmp_path / "a.db"
    assert main(["import", str(inside), "--db", str(db)]) == 0
    assert _counts(db) == (3, sum(len(r["questions"]) for r in mine))
    conn = sqlite3.connect(db)
    ids = {r[0] for r in conn.execute("SELECT id FROM passages")}
    conn.close()
    assert ids.isdisjoint({Path(r["id"]).stem for r in stranger})


def test_ids_cannot_steer_an_export_out_of_its_folder(tmp_path, capsys):
    records = _race_records(2)
    records[0]["id"] = "../../escaped"
    records[1]["id"] = "/tmp/absolute_escape"
    src = tmp_path / "in" / "hostile.jsonl"
    src.parent.mkdir()
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    db = tmp_path / "in" / "a.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    out = tmp_path / "deep" / "er" / "race_out"
    out.parent.mkdir(parents=True)
    before = set(tmp_path.rglob("*"))
    assert main(["export", "race", "--db", str(db), "-o", str(out)]) == 0
    created = set(tmp_path.rglob("*")) - before
    assert created and all(p == out or out in p.parents for p in created), created
    assert not Path("/tmp/absolute_escape.txt").exists()
    assert len([p for p in created if p.suffix == ".txt"]) == 2
    # the renamed ids are listed next to them, and come back unchanged from the records
    listed = dict(line.split("\t") for line in (out / "ids.tsv").read_text(encoding="utf-8").splitlines()[1:])
    assert sorted(listed) == ["../../escaped", "/tmp/absolute_escape"]
    for ident, name in listed.items():
        assert "/" not in name and not name.startswith(".")
        (ds,) = formats.read(out / name)
        assert ds.passages[0].id == ident


# ---------------------------------------------------------------- bounded memory

def test_huge_file_is_refused_before_it_is_read(tmp_path, capsys):
    big = tmp_path / "huge.jsonl"
    with open(big, "wb") as fh:  # sparse: costs no disk, but reports its size
        fh.truncate(safe_read.MAX_BYTES + 1)
    tracemalloc.start()
    try:
        rc = main(["import", str(big), "--format", "race", "--db", str(tmp_path / "a.db")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {big}: file is {(safe_read.MAX_BYTES + 1) / 2**20:.0f} MB, above the " \
                  f"{safe_read.MAX_BYTES // 2**20} MB limit", err
    assert peak < 20 * 2**20  # it never read the file


def test_cap_applies_to_each_file_of_a_folder(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "race"
    folder.mkdir()
    records = _race_records(2)
    for r in records:
        (folder / f"{r['id']}.txt").write_text(json.dumps(r), encoding="utf-8")
    sizes = sorted(p.stat().st_size for p in folder.iterdir())
    monkeypatch.setattr(safe_read, "MAX_BYTES", sizes[-1] - 1)  # the larger file is over the cap
    db = tmp_path / "a.db"
    assert main(["import", str(folder), "--db", str(db)]) == 2
    assert "above the" in capsys.readouterr().err
    assert not db.exists() or _counts(db) == (0, 0)  # nothing imported


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_endless_input_is_refused(tmp_path, capsys):
    assert main(["import", "/dev/zero", "--format", "race", "--db", str(tmp_path / "a.db")]) == 2
    assert capsys.readouterr().err.strip() == \
        "error: /dev/zero: not a regular file (a device, pipe or socket cannot be imported)"


def test_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert main(["import", str(fifo), "--db", str(tmp_path / "a.db")]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_reader_bug_still_ends_on_the_error_line(tmp_path, monkeypatch, capsys):
    """Defence in depth: should a reader crash on a file nobody foresaw, the user reads one
    `error:` line and nothing is imported (fuzzing hunts such crashes in the readers)."""
    from desktop.formats import race

    def crashing_reader(rec, file, record, source="race", default_id=None):
        return {}["article"]  # the kind of slip a reader could make on a hostile record

    monkeypatch.setattr(race, "passage_from_record", crashing_reader)  # what every RACE reading calls
    src = tmp_path / "race.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _race_records(1)), encoding="utf-8")
    db = tmp_path / "a.db"
    assert main(["import", str(src), "--format", "race", "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {src}: unexpected content (KeyError: 'article')")
    assert not db.exists()
