"""`mcqlens score` on ExpMRC RACE+ dev with the tiny model: stores, resumes, completes MI."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import inference
from desktop import cli
from desktop.app import score as score_cmd
from desktop.store import Store

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_model"
EXPMRC = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


@pytest.fixture()
def db(tmp_path):
    from desktop import formats

    path = tmp_path / "a.db"
    with Store.open(path) as store:
        store.import_datasets(formats.read(EXPMRC), file=str(EXPMRC))
    return path


def _stored(db):
    with Store.open(db) as store:
        return {r.item_id: {p.input_format: p for p in store.predictions(r.item_id, "tiny-bert-2x32")}
                for r in store.items()}


def test_score_stores_every_question_and_resumes_after_an_interruption(db, monkeypatch, capsys):
    real_score = inference.score
    calls = []

    def flaky(*a, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_score(*a, **kw)

    monkeypatch.setattr(score_cmd, "CHUNK", 100)
    monkeypatch.setattr(inference, "score", flaky)
    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--device", "cpu",
                     "--formats", "shortcut", "--no-progress"]) == 130
    partial = _stored(db)
    assert sum(1 for v in partial.values() if v) == 200  # two chunks were kept
    monkeypatch.setattr(inference, "score", real_score)
    capsys.readouterr()
    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--device", "cpu", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "561 questions, 0 already scored" in err and "CPU" in err.split("\n")[0]
    done = _stored(db)
    assert len(done) == 561 and all(set(v) == {"standard", "shortcut"} for v in done.values())
    # the 200 shortcut rows of the first run were not rescored, yet carry MI now
    for item, preds in done.items():
        s, c = preds["shortcut"], preds["standard"]
        h = lambda p: -sum(x * math.log2(x) for x in p if x > 0)
        assert math.isclose(s.extra["mi_bits"], h(s.probabilities) - h(c.probabilities), abs_tol=1e-9)
        assert math.isclose(sum(c.probabilities), 1.0, abs_tol=1e-6)
        if partial[item]:
            assert partial[item]["shortcut"].probabilities == s.probabilities
    capsys.readouterr()
    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--device", "cpu", "--no-progress"]) == 0
    assert "561 already scored" in capsys.readouterr().err


def test_stored_probabilities_are_the_runtime_s(db):
    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--device", "cpu", "--no-progress",
                     "--formats", "standard"]) == 0
    with Store.open(db) as store:
        row = store.items()[7]
        passage = store.passage(row.passage_id)
        q = next(q for q in passage.questions if q.id == row.item_id)
        (stored,) = store.predictions(row.item_id, "tiny-bert-2x32")
    (fresh,) = inference.score(inference.load_model(TINY, device="cpu"), [q], {passage.id: passage}, ["standard"])
    assert stored.probabilities == pytest.approx(fresh.formats["standard"].probabilities, abs=1e-6)
    assert stored.extra["predicted"] == fresh.formats["standard"].predicted


def test_no_model_installed_or_unknown_format_is_a_clear_error(db, monkeypatch, capsys, tmp_path):
    from inference import catalog

    monkeypatch.setattr(catalog, "DEFAULT", tmp_path / "none")  # the shipped default, as locate_model finds it
    monkeypatch.delenv(catalog.ENV, raising=False)
    assert cli.main(["score", "--db", str(db)]) == 2
    assert "no model is installed" in capsys.readouterr().err
    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--formats", "options"]) == 2
    assert "does not serve options" in capsys.readouterr().err


def test_prediction_table_rows_from_stored_predictions(db):
    from inference.prediction_table import COLUMNS, rows_for

    assert cli.main(["score", "--db", str(db), "--model", str(TINY), "--device", "cpu", "--no-progress"]) == 0
    with Store.open(db) as store:
        item = store.items()[3].item_id
        preds = store.predictions(item)
    rows = rows_for(item, preds)
    assert [r["format"] for r in rows] == [p.input_format for p in preds] and all(tuple(r) == COLUMNS for r in rows)
    assert COLUMNS[-1] == "evidence" and [bool(r["evidence"]) for r in rows] == [p.input_format == "standard" for p in preds]
    by = {r["format"]: r for r in rows}
    for p in preds:
        r = by[p.input_format]
        assert r["predicted"] == "ABCD"[p.extra["predicted"]]
        assert math.isclose(r["entropy_bits"], p.extra["entropy_bits"], abs_tol=1e-9)
        assert math.isclose(r["n_eff"], p.extra["n_eff"], rel_tol=1e-9)
        assert math.isclose(r["mi_bits"], p.extra["mi_bits"], abs_tol=1e-9)
    assert rows_for(item, [p for p in preds if p.input_format == "standard"])[0]["mi_bits"] == ""
