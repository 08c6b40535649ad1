"""`mcqlens annotate`: JSON lines in, `ok <history id>` out after each commit, errors go on."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.store import Store

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
RUN = [sys.executable, "-c", "import sys; from desktop.cli import main; sys.exit(main())"]


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "a.db"
    assert main(["import", str(GREEN), "--db", str(path)]) == 0
    return path


def test_each_line_is_acknowledged_after_commit(db):
    first = json.loads(GREEN.read_text(encoding="utf-8").splitlines()[0])
    q = first["test"][0]["id"]
    proc = subprocess.Popen([*RUN, "annotate", "--db", str(db), "--annotator", "anna"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # one line at a time: each answer must come before the next line is sent (flushed, not buffered)
    proc.stdin.write(json.dumps({"item": q, "field": "comment", "value": "first"}) + "\n")
    proc.stdin.flush()
    ack = proc.stdout.readline().split()
    assert ack[0] == "ok"
    with Store.open(db, create=False) as s:  # committed before it was acknowledged
        row = s.history(q)[-1]
        assert row.id == int(ack[1]) and row.after == ["first"]
    lines = [
        "not json",
        json.dumps({"item": "missing", "field": "comment", "value": "x"}),
        json.dumps({"item": q, "field": "span.add", "value": {"role": "evidence", "start": 0, "end": 12}}),
        json.dumps({"item": q, "field": "difficulty.toi", "value": "cause", "annotator": "boris"}),
        json.dumps({"undo": True}),
        json.dumps({"item": q}),
    ]
    out, err = proc.communicate("\n".join(lines) + "\n", timeout=60)
    answers = out.splitlines()
    assert proc.returncode == 1  # some lines failed; the rest were applied
    assert [a.split()[0] for a in answers] == ["error:", "error:", "ok", "ok", "ok", "error:"]
    assert "line 2" in answers[0] and "unknown item 'missing'" in answers[1] and "missing field" in answers[5]
    with Store.open(db, create=False) as s:
        rows = {r.id: r for r in s.history(q)}
        assert rows[int(answers[2].split()[1])].field == "span.add"
        assert rows[int(answers[3].split()[1])].annotator == "boris"
        undo = rows[int(answers[4].split()[1])]
        assert (undo.kind, undo.annotator, undo.field) == ("undo", "anna", "span.add")  # anna's latest, not boris's
        assert s.question(q).comments[-1] == "first"
        assert not [sp for sp in s.question(q).spans if sp.role == "evidence"]


def test_annotate_needs_an_existing_database(tmp_path, capsys):
    assert main(["annotate", "--db", str(tmp_path / "none.db")]) == 2
    assert capsys.readouterr().err.startswith("error: no database")


def test_edits_reach_the_export(db, tmp_path):
    records = [json.loads(line) for line in GREEN.read_text(encoding="utf-8").splitlines()]
    q = records[0]["test"][0]
    edits = [{"item": q["id"], "field": "comments", "value": ["basis of B too short"]},
             {"item": q["id"], "field": "span.add", "value": {"role": "evidence", "start": 0, "end": 5}}]
    proc = subprocess.run([*RUN, "annotate", "--db", str(db), "--annotator", "anna"], text=True,
                          input="".join(json.dumps(e) + "\n" for e in edits), capture_output=True, timeout=60)
    assert proc.returncode == 0 and [a.split()[0] for a in proc.stdout.splitlines()] == ["ok", "ok"]
    out = tmp_path / "out.jsonl"
    assert main(["export", "embrace", "--db", str(db), "-o", str(out), "--annotator", "anna"]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert "basis of B too short" in lines[0]["test"][0]["annotations"]["comments"]
    assert lines[1:] == records[1:]  # the other items are written back as they came
    import pandas as pd
    table = tmp_path / "t.csv"
    assert main(["export", "csv", "--db", str(db), "-o", str(table)]) == 0
    row = pd.read_csv(table, keep_default_na=False).set_index("item_id").loc[q["id"]]
    assert row["status"] == "in progress" and row["n_evidence"] == 1 and row["evidence"] == records[0]["text"][:5]
