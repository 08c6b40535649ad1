"""The NOTA grid with a real ONNX model (the tiny test model) through `inference.score`."""
import csv
import os
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.domain import nota
from desktop.formats import expmrc
from desktop.reports import nota_eval
from desktop.reports.nota_scoring import load_models

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"
TINY = Path(os.environ.get("MCQLENS_TINY_MODEL", ROOT / "tests" / "data" / "tiny_model"))

pytestmark = pytest.mark.skipif(not (TINY / "card.json").is_file(), reason="tiny test model not built yet")


@pytest.fixture(scope="module")
def passages():
    return expmrc.read(DATA).passages


def test_cached_logits_give_the_predictions_of_scoring_each_test_set(passages):
    import inference

    subset = passages[:30]
    [m] = load_models([str(TINY)], None, "cpu")
    rows = nota_eval.run([m], subset, ["0.4"], seed=5, replicas=1)
    out, _ = nota.transform(subset, "0.4", 5, 1)
    questions = [q for p in out for q in p.questions]
    model = inference.load_model(TINY, device="cpu")
    scores = inference.score(model, questions, {p.id: p for p in out}, [m.fmt],
                             nota_indices=[q.unanswerable_alternatives[0] for q in questions])
    conf = nota.Confusion()
    for q, s in zip(questions, scores):
        conf.add(q.answerability == "answerable", s.formats[m.fmt].predicted, q.key,
                 q.unanswerable_alternatives[0])
    row = rows[0]
    got = (row["true_nota"], row["missed_nota"], row["false_nota"], row["correct"], row["wrong"])
    want = (conf.true_nota, conf.missed_nota, conf.false_nota, conf.correct, conf.wrong)
    # same logits up to float noise between batchings: at most one near-tie may flip
    assert sum(abs(a - b) for a, b in zip(got, want)) <= 2 and sum(got) == sum(want) == len(questions)


def test_eval_command_writes_grid_and_heatmaps(tmp_path):
    import json

    doc = json.loads(DATA.read_text(encoding="utf-8"))
    doc["data"] = doc["data"][:25]  # a smaller ExpMRC file keeps the test quick
    n = sum(len(r["questions"]) for r in doc["data"])
    data = tmp_path / "expmrc-25.json"
    data.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["nota", "eval", "--model", str(TINY), "--data", str(data), "--c", "0,0.5,1",
                 "--replicas", "2", "-o", str(tmp_path), "--device", "cpu"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "nota_metrics.csv", encoding="utf-8")))
    assert [r["c"] for r in rows] == ["0.0", "0.5", "1.0"]
    assert rows[0]["recall"] == "" and rows[2]["specificity"] == ""
    reps = list(csv.DictReader(open(tmp_path / "nota_replicas.csv", encoding="utf-8")))
    half = int(n / 2 + 0.5)  # half-up
    assert [int(r["unanswerable"]) for r in reps] == [0, 0, half, half, n, n]
    assert all(int(r["n"]) == n for r in reps)
    assert len(list(tmp_path.glob("heatmap_*.png"))) == 7
