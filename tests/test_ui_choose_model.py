"""Model > Choose the model…: the shipped models listed by name (inference.catalog), the choice used by
the model panel and remembered; `mcqlens gui` and `mcqlens score` say which model they use.  The
shipped folders are stood in for by copies of the tiny one-sequence model (a fast default and its
accurate reading of the same files), so no large model loads here."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_oneseq"
GREEN = ROOT.parent / "shared" / "data" / "embrace" / "embrace_green.jsonl"


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    from inference import catalog

    root = tmp_path / "models"
    shutil.copytree(TINY, root / "default")
    (root / "accurate").mkdir()
    card = json.loads((TINY / "card.json").read_text())
    card.update(name="tiny reader, accurate", id="tiny-accurate", max_length=512, weights="../default")
    (root / "accurate" / "card.json").write_text(json.dumps(card))
    monkeypatch.setattr(catalog, "MODELS", root)
    monkeypatch.setattr(catalog, "DEFAULT", root / "default")
    monkeypatch.setenv("MCQLENS_MODEL", str(root / "default"))
    return root


def test_the_shipped_models_are_listed_by_name_default_first(shipped):
    from inference.catalog import locate_model, shipped_models

    got = shipped_models(shipped)
    assert [m.directory.name for m in got] == ["default", "accurate"] and got[0].default
    assert [m.max_length for m in got] == [256, 512]
    assert locate_model("elsewhere") == Path("elsewhere")
    assert locate_model(None) == shipped / "default"  # $MCQLENS_MODEL


def test_choose_the_model_by_name_uses_and_remembers_it(qtbot, tmp_path, shipped, capsys):
    from desktop import cli
    from desktop.store import Store
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    db = tmp_path / "a.db"
    assert cli.main(["import", str(GREEN), "--db", str(db)]) == 0
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    window = MainWindow(Backend.open(str(db), annotator="anna"), settings=settings, facts=False)
    window.owns_backend = True
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.model_review.model is not None, timeout=30000)
    assert "tiny one-sequence test model" in capsys.readouterr().err  # the window says which model
    assert window.model_menu.choose_model("tiny reader, accurate")
    assert Path(window.model_menu.model_dir()) == shipped / "accurate"
    assert settings.value("model_dir") == str(shipped / "accurate")
    review = window.model_review
    qtbot.waitUntil(lambda: review.model is not None and review.model.directory == shipped / "accurate",
                    timeout=30000)
    assert review.model.card.max_length == 512 and review.model.card.id == "tiny-accurate"
    # the status bar follows the new model's thread (its snapshots are newer than the old thread's)
    qc = review.queue_control
    qc.pause_action.trigger()
    assert qc.model_state.text() == "model: paused"
    qc.pause_action.trigger()
    qtbot.waitUntil(lambda: qc.model_state.text() != "model: paused", timeout=10000)
    errors = []
    window.error = errors.append
    assert not window.model_menu.choose_model("no such model") and "tiny reader, accurate" in errors[0]
    window.close()
    Store.open(str(db)).close()


def test_mcqlens_score_says_which_model(tmp_path, capsys):
    from desktop import cli

    db = tmp_path / "b.db"
    assert cli.main(["import", str(GREEN), "--db", str(db)]) == 0
    capsys.readouterr()
    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--formats", "shortcut"]) == 0
    err = capsys.readouterr().err
    assert "model tiny-mpnet-oneseq-2x32 (tiny one-sequence test model)" in err
