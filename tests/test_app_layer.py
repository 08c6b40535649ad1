"""The application layer (desktop/app): the command line and the window call the same task
functions, every file is written beside its target and renamed into place, and the model
directory is decided in one place and travels as a parameter, never through the environment."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop import cli
from desktop.formats import atomic

ROOT = Path(__file__).resolve().parents[1]
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic.replacing(out) as tmp:
            assert tmp.parent == out.parent and tmp.suffix == ".csv" and tmp.name.startswith(".")
            tmp.write_text("half", encoding="utf-8")
            raise RuntimeError("cancelled")
    assert out.read_text(encoding="utf-8") == "old" and sorted(tmp_path.iterdir()) == [out]
    atomic.write_text(out, "new\n")
    assert out.read_text(encoding="utf-8") == "new\n" and sorted(tmp_path.iterdir()) == [out]


def test_a_folder_is_swapped_whole(tmp_path):
    out = tmp_path / "race_folder"
    out.mkdir()
    (out / "old.txt").write_text("old", encoding="utf-8")
    with atomic.replacing(out) as tmp:
        tmp.mkdir()
        (tmp / "new.txt").write_text("new", encoding="utf-8")
    assert [p.name for p in out.iterdir()] == ["new.txt"] and sorted(tmp_path.iterdir()) == [out]


def test_the_window_and_the_command_line_export_the_same_bytes(tmp_path):
    from desktop.app.export import export
    from desktop.store import Store

    db = tmp_path / "a.db"
    assert cli.main(["import", str(GREEN), "--db", str(db)]) == 0
    by_command = tmp_path / "command.jsonl"
    assert cli.main(["export", "embrace", "--db", str(db), "-o", str(by_command)]) == 0
    steps = []
    with Store.open(str(db), read_only=True) as store:
        result = export(store, "embrace", tmp_path / "app.jsonl", progress=steps.append)
    assert (tmp_path / "app.jsonl").read_bytes() == by_command.read_bytes() == GREEN.read_bytes()
    assert result.questions == 200 and steps[0] == "reading the database"


def test_the_model_directory_is_given_then_the_environment_then_remembered_then_shipped(tmp_path, monkeypatch):
    from inference import catalog

    remembered = tmp_path / "chosen"
    remembered.mkdir()
    (remembered / "card.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv(catalog.ENV, str(tmp_path / "env"))
    assert catalog.locate_model(tmp_path / "given", remembered) == tmp_path / "given"
    assert catalog.locate_model(None, remembered) == tmp_path / "env"
    monkeypatch.delenv(catalog.ENV)
    assert catalog.locate_model(None, remembered) == remembered
    assert catalog.locate_model(None, tmp_path / "gone") == catalog.DEFAULT


def test_mcqlens_gui_passes_its_model_as_a_parameter_not_through_the_environment(monkeypatch):
    import desktop.ui.app as ui_app

    seen = {}
    monkeypatch.setattr(ui_app, "run", lambda db, **kw: seen.update(kw, db=db) or 0)
    before = os.environ.get("MCQLENS_MODEL")
    assert cli.main(["gui", "--db", "x.db", "--model", "some/model"]) == 0
    assert seen["model"] == "some/model" and seen["db"] == "x.db"
    assert os.environ.get("MCQLENS_MODEL") == before
