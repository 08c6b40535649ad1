"""Faults: a read-only database, a full disk, an inconsistent model directory, an existing
export target.  Each gets a clear message and leaves nothing half-written."""
from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import pathlib
import sqlite3
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.domain.changes import Change
from desktop.domain.errors import ModelError, StoreError
from desktop.store import Store, connection

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT / ".." / "shared" / "data" / "embrace" / "embrace_green.jsonl"
EXPMRC = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def base_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("faults") / "base.db"
    assert main(["import", str(GREEN), str(EXPMRC), "--db", str(db)]) == 0
    with Store.open(db, annotator="anna") as s:
        s.apply(Change("0_0", "comment", "kept through every fault"))
    return db


@pytest.fixture
def db(base_db, tmp_path) -> Path:
    path = tmp_path / "a.db"
    with Store.open(base_db) as s:  # a consistent copy, WAL included
        s._c.backup(str(path))
    return path


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


# ---------------------------------------------------------------- read-only database

@pytest.fixture
def read_only_files(monkeypatch):
    """Open databases the way SQLite does a file without write permission.

    Tests run as root, for whom chmod does not stop writes; a `mode=ro` URI makes
    SQLite itself refuse them, exactly as it does for an unwritable file."""
    real = sqlite3.connect

    def connect(path, *args, **kwargs):
        if path != ":memory:" and not str(path).endswith(".tmp") and not kwargs.get("uri"):
            path = f"{Path(path).resolve().as_uri()}?mode=ro"
            kwargs["uri"] = True
        return real(path, *args, **kwargs)

    monkeypatch.setattr(connection.sqlite3, "connect", connect)


def test_read_only_database_reads_but_refuses_edits_with_a_message(db, read_only_files, monkeypatch, capsys):
    before = _sha(db)
    with Store.open(db, annotator="anna") as s:
        assert s.question("0_0", "anna").comments == ["kept through every fault"]
        with pytest.raises(StoreError, match="^read-only: cannot save changes to "):
            s.apply(Change("0_0", "comment", "lost?"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"item": "0_0", "field": "comment", "value": "x"})
                                                   + "\n"))
    assert main(["annotate", "--db", str(db)]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("error: line 1: read-only: cannot save changes to "), out
    assert _sha(db) == before


def test_read_only_old_database_is_not_half_upgraded(tmp_path, read_only_files, monkeypatch, capsys):
    db = tmp_path / "old.db"
    db.write_bytes((ROOT / "tests" / "data" / "schema_v1" / "annotations_v1.db").read_bytes())
    before = _sha(db)
    # reading works: through an upgraded copy in memory
    assert main(["stats", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "schema 1, read through an upgraded copy in memory; the file is unchanged" in out, out
    # writing needs the upgrade, which cannot be saved: said, and the file is byte-identical
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"item": "0_0", "field": "comment", "value": "x"})
                                                   + "\n"))
    assert main(["annotate", "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: read-only: cannot save changes to "), err
    assert _sha(db) == before and not list(tmp_path.glob("*.bak-v*"))


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/proc/self"), reason="root-only check of the premise")
def test_premise_root_ignores_chmod(db):
    # why the fixture above simulates instead of chmod: as root the write would succeed
    os.chmod(db, 0o444)
    try:
        conn = sqlite3.connect(db)
        changed = conn.execute("UPDATE questions SET status = status").rowcount
        conn.commit()
        conn.close()
        assert changed > 0
    finally:
        os.chmod(db, 0o644)


# ---------------------------------------------------------------- full disk

class _FullDisk:
    """The sqlite3 connection, except that COMMIT fails as SQLite fails on a full disk."""

    def __init__(self, real):
        self.real = real

    def execute(self, sql, *args):
        if sql.strip().upper() == "COMMIT":
            raise sqlite3.OperationalError("database or disk is full")
        return self.real.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_full_disk_on_commit_saves_nothing_and_says_so(db):
    with Store.open(db, annotator="anna") as s:
        n = len(s.history())
        version = s.row_version("0_1")
        real = s._c.conn
        s._c.conn = _FullDisk(real)
        with pytest.raises(StoreError, match="^disk full: nothing was saved in "):
            s.apply(Change("0_1", "comment", "on a full disk"))
        with pytest.raises(StoreError, match="disk full"):
            s.apply(Change("0_1", "span.add", {"role": "evidence", "start": 0, "end": 5}))
        s._c.conn = real  # space freed: the store is usable again, nothing of the failed edits remains
        assert len(s.history()) == n and s.row_version("0_1") == version
        assert s.question("0_1", "anna").comments == []
        s.apply(Change("0_1", "comment", "after freeing space"))
    assert _integrity(db) == "ok"
    with Store.open(db) as s:
        assert s.question("0_1", "anna").comments == ["after freeing space"]


def _fill_disk_halfway(monkeypatch):
    """Path.write_text writes half its text, then fails like a full disk."""
    real = pathlib.Path.write_text

    def write_text(self, data, *args, **kwargs):
        real(self, data[: len(data) // 2], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(pathlib.Path, "write_text", write_text)


def _half_csv(monkeypatch):
    import pandas as pd

    def to_csv(self, path, *args, **kwargs):
        Path(path).write_bytes(b"item_id,passage_id\n0_0,")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)


@pytest.mark.parametrize("kind, name", [("embrace", "out.jsonl"), ("expmrc", "out.json"),
                                        ("race", "out.jsonl"), ("race", "race_folder"), ("csv", "out.csv")])
@pytest.mark.parametrize("existing", [False, True])
def test_full_disk_during_export_leaves_nothing_half_written(db, tmp_path, monkeypatch, capsys, kind, name,
                                                             existing):
    out_dir = tmp_path / "exports"
    out_dir.mkdir()
    out = out_dir / name
    if existing:  # a previous export, to be replaced with --force
        if name.endswith("folder"):
            out.mkdir()
            (out / "keep.txt").write_text("previous export", encoding="utf-8")
        else:
            out.write_text("previous export", encoding="utf-8")
    before = sorted(p.relative_to(out_dir) for p in out_dir.rglob("*"))
    if kind == "csv":
        _half_csv(monkeypatch)
    else:
        _fill_disk_halfway(monkeypatch)
    source = "expmrc" if kind == "race" else None
    args = ["export", kind, "--db", str(db), "-o", str(out)] + (["--force"] if existing else [])
    args += ["--source", source] if source else []
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: cannot write {out}: No space left on device; nothing was written", err
    monkeypatch.undo()
    # no temporary file left, and the previous export (if any) is intact
    assert sorted(p.relative_to(out_dir) for p in out_dir.rglob("*")) == before
    if existing:
        kept = out / "keep.txt" if out.is_dir() else out
        assert kept.read_text(encoding="utf-8") == "previous export"


# ---------------------------------------------------------------- existing export target

def test_existing_target_is_refused_without_force_and_replaced_with_it(db, tmp_path, capsys):
    out = tmp_path / "green.jsonl"
    out.write_text("a file the user wants to keep\n", encoding="utf-8")
    assert main(["export", "embrace", "--db", str(db), "-o", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {out} exists; add --force to overwrite it"
    assert out.read_text(encoding="utf-8") == "a file the user wants to keep\n"
    assert main(["export", "embrace", "--db", str(db), "-o", str(out), "--force"]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(GREEN.read_text(encoding="utf-8").splitlines())
    assert json.loads(lines[0])["test"][0]["annotations"]["comments"] == ["kept through every fault"]
    assert not [p for p in tmp_path.iterdir() if "tmp" in p.name or p.name.endswith(".part")]


def test_interrupted_export_leaves_no_file(db, tmp_path, monkeypatch, capsys):
    """A Ctrl-C (or any non-OS failure) in the middle of writing: no target, no temporary file."""
    from desktop import formats

    def interrupted(*args, **kwargs):
        Path(args[2]).write_text("{\"half\": ", encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(formats, "write", interrupted)
    out = tmp_path / "exports" / "green.jsonl"
    out.parent.mkdir()
    assert main(["export", "embrace", "--db", str(db), "-o", str(out)]) == 130
    assert list(out.parent.iterdir()) == []


# ---------------------------------------------------------------- model directory: card vs graph

def _model_dir(path: Path, graph_inputs: list[str], card_inputs: list[str]) -> Path:
    import onnx
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    path.mkdir()
    ins = [helper.make_tensor_value_info(n, TensorProto.INT64, ["B", "O", "T"]) for n in graph_inputs]
    nodes = [helper.make_node("Cast", [graph_inputs[0]], ["f"], to=TensorProto.FLOAT),
             helper.make_node("ReduceSum", ["f", "axes"], ["logits"], keepdims=0)]
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [2])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", "O"])
    graph = helper.make_graph(nodes, "tiny", ins, [out], initializer=[axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path / "model.onnx")
    tok = Tokenizer(WordLevel({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.save(str(path / "tokenizer.json"))
    card = {"name": "tiny", "id": "tiny", "backbone": "none", "formats": ["standard"], "max_length": 16,
            "files": {"fp32": "model.onnx"}, "tokenizer": "tokenizer.json", "inputs": card_inputs}
    (path / "card.json").write_text(json.dumps(card), encoding="utf-8")
    return path


def test_model_directory_whose_card_and_graph_disagree(tmp_path):
    import inference

    d = _model_dir(tmp_path / "model", ["input_ids", "attention_mask"],
                   ["input_ids", "attention_mask", "token_type_ids"])
    with pytest.raises(ModelError) as info:
        inference.load_model(d, device="cpu")
    message = str(info.value)
    assert "model.onnx" in message and "differ from the card" in message
    assert "token_type_ids" in message  # names what the card claims and the graph lacks
    # the same directory with a card that tells the truth loads
    card = json.loads((d / "card.json").read_text(encoding="utf-8"))
    card["inputs"] = ["input_ids", "attention_mask"]
    (d / "card.json").write_text(json.dumps(card), encoding="utf-8")
    assert inference.load_model(d, device="cpu").id == "tiny"


def test_model_directory_with_a_truncated_graph(tmp_path):
    import inference

    d = _model_dir(tmp_path / "model", ["input_ids", "attention_mask"], ["input_ids", "attention_mask"])
    graph = d / "model.onnx"
    graph.write_bytes(graph.read_bytes()[: graph.stat().st_size // 2])
    with pytest.raises(ModelError, match="ONNX Runtime cannot load this graph"):
        inference.load_model(d, device="cpu")
