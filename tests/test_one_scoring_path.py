"""One scoring path: `mcqlens score`, the window and `mcqlens export predictions` store and show
the same rows, model evidence included (tiny test model, real EMBRACE green and ExpMRC items).

Expected values are recomputed from the stored probabilities (H, N = 2^H, MI) and from the
passage text (the evidence offsets)."""
from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from desktop import cli, formats  # noqa: E402
from desktop.store import Store  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
GREEN = DATA / "embrace" / "embrace_green.jsonl"
EXPMRC = DATA / "expmrc" / "expmrc-race-dev.json"
TINY = ROOT / "tests" / "data" / "tiny_model"
MODEL_ID = "tiny-bert-2x32"
COLUMNS = ["item_id", "model", "format", "probs", "predicted", "entropy_bits", "n_eff", "mi_bits", "evidence"]

needs_model = pytest.mark.skipif(not (TINY / "card.json").is_file(), reason="tiny test model not built")


def _h(p):
    return -sum(x * math.log2(x) for x in p if x > 0)


def _scored_db(path: Path, source: Path) -> Path:
    with Store.open(path) as store:
        store.import_datasets(formats.read(str(source)), file=str(source))
    assert cli.main(["score", "--db", str(path), "--model", str(TINY), "--device", "cpu", "--no-progress"]) == 0
    return path


@needs_model
def test_cli_stores_the_evidence_the_window_shows(qtbot, monkeypatch, tmp_path):
    from desktop.app import model_scoring as ms
    from desktop.ui.backend import Backend
    from desktop.ui.main_window import MainWindow

    db = _scored_db(tmp_path / "a.db", GREEN)
    with Store.open(db) as store:
        before = {r.item_id: store.predictions(r.item_id, MODEL_ID) for r in store.items()}
    assert before and all(len(v) == 2 for v in before.values())
    # every standard row the CLI stored carries the model's evidence, an exact slice of its passage
    with Store.open(db) as store:
        for item_id, preds in before.items():
            std = next(p for p in preds if p.input_format == "standard")
            passage = store.passage(store.question(item_id).passage_id).text
            assert std.evidence and passage[std.extra["evidence_start"]:std.extra["evidence_end"]] == std.evidence
    monkeypatch.setenv("MCQLENS_MODEL", str(TINY))
    window = MainWindow(Backend(Store.open(str(db), annotator="anna")), facts=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    mr = window.model_review
    qtbot.waitUntil(lambda: mr.model is not None or mr.model_error is not None, timeout=30000)
    assert mr.model_error is None
    item = window.current
    qtbot.waitUntil(lambda: mr.view is not None and mr.view.evidence is not None, timeout=30000)
    std = next(p for p in before[item] if p.input_format == "standard")
    # the window shows what the CLI stored: the evidence outline and the same probabilities
    assert mr.view.evidence == (std.extra["evidence_start"], std.extra["evidence_end"], std.evidence)
    assert any(s.origin == "model" and (s.start, s.end) == mr.view.evidence[:2] for s in window.passage.spans)
    for p in before[item]:
        assert mr.view.formats[p.input_format].probabilities == pytest.approx(p.probabilities, abs=1e-12)
    # and scoring the item in the window (the worker's function) gives the rows the CLI stored
    q = window.backend.store.question(item)
    fresh = ms.score_item(mr.model, q, window.state.passage_text)
    assert {p.input_format: (p.evidence, p.extra["evidence_start"]) for p in fresh if p.evidence} == \
        {"standard": (std.evidence, std.extra["evidence_start"])}
    for p in fresh:
        old = next(o for o in before[item] if o.input_format == p.input_format)
        assert p.probabilities == pytest.approx(old.probabilities, abs=1e-6)
    # the window stored nothing new: the item was complete
    assert window.backend.store.stats()["annotations"]["predictions"] == 2 * len(before)
    window.close()
    window.backend.close()


@needs_model
def test_export_predictions_on_expmrc_dev(tmp_path, capsys):
    db = _scored_db(tmp_path / "e.db", EXPMRC)
    out = tmp_path / "preds.csv"
    assert cli.main(["export", "predictions", "--db", str(db), "-o", str(out)]) == 0
    with open(out, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    ds = json.loads(EXPMRC.read_text(encoding="utf-8"))
    n_questions = sum(len(s["questions"]) for s in ds["data"])
    assert n_questions == 561 and len(rows) == 2 * n_questions
    assert {r["model"] for r in rows} == {MODEL_ID}
    articles = {s["id"]: s["article"] for s in ds["data"]}
    with Store.open(db) as store:
        stored = {(r.item_id, p.input_format): p for r in store.items() for p in store.predictions(r.item_id)}
    by_item: dict[str, dict[str, dict]] = {}
    for r in rows:
        p = stored[(r["item_id"], r["format"])]
        probs = json.loads(r["probs"])
        assert probs == pytest.approx(p.probabilities, abs=1e-12)
        h = _h(p.probabilities)
        assert float(r["entropy_bits"]) == pytest.approx(h, abs=1e-9)
        assert float(r["n_eff"]) == pytest.approx(2 ** h, rel=1e-9)
        assert r["predicted"] == "ABCD"[max(range(len(probs)), key=probs.__getitem__)]
        by_item.setdefault(r["item_id"], {})[r["format"]] = r
    for item, fm in by_item.items():
        s, c = fm["shortcut"], fm["standard"]
        mi = _h(json.loads(s["probs"])) - _h(json.loads(c["probs"]))
        assert float(s["mi_bits"]) == pytest.approx(mi, abs=1e-9) and float(c["mi_bits"]) == pytest.approx(mi, abs=1e-9)
        # evidence: on the standard row, a stretch of the item's own passage
        assert s["evidence"] == ""
        assert c["evidence"] and c["evidence"] in articles[item.rsplit("-", 1)[0]]
    # an existing file is kept without --force
    assert cli.main(["export", "predictions", "--db", str(db), "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err


def test_export_predictions_without_predictions_is_an_error_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "n.db"
    with Store.open(db) as store:
        store.import_datasets(formats.read(str(GREEN)), file=str(GREEN))
    out = tmp_path / "none.csv"
    assert cli.main(["export", "predictions", "--db", str(db), "-o", str(out)]) == 2
    assert "no stored predictions" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".none.csv*"))


@needs_model
def test_a_question_on_a_20_mb_passage_is_scored_from_its_start():
    # the reader sees the first 512 tokens and the evidence is looked for in the first
    # inference.EVIDENCE_MAX_CHARS characters: a 20 MB passage scores as its opening does
    import inference

    [ds] = formats.read(str(EXPMRC))
    p = ds.passages[0]
    q = p.questions[0]
    huge = (p.text + "\n") * (20_000_000 // len(p.text) + 1)
    opening = huge[:inference.EVIDENCE_MAX_CHARS + 5000]
    model = inference.load_model(TINY, device="cpu")
    big, small = (inference.score(model, [q], [t], ["standard", "shortcut"])[0] for t in (huge, opening))
    for fmt in ("standard", "shortcut"):
        assert big.formats[fmt].logits == pytest.approx(small.formats[fmt].logits, abs=1e-6)
    assert big.evidence == small.evidence and big.evidence.end <= inference.EVIDENCE_MAX_CHARS
    assert huge[big.evidence.start:big.evidence.end] == big.evidence.text
