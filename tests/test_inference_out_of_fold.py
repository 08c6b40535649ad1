"""The shipped model never scores the RACE items it trained on: their out-of-fold logits are served.

Numbers come from the model directory itself: its card's out-of-fold accuracy and its
`oof_predictions.jsonl`.
"""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import inference
from desktop import formats
from inference import metrics, out_of_fold

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEFAULT = ROOT / "models" / "default"
pytestmark = pytest.mark.skipif(not (DEFAULT / "card.json").is_file(), reason="no default model shipped")


@pytest.fixture(scope="module")
def model():
    return inference.load_model(DEFAULT, device="cpu")


@pytest.fixture(scope="module")
def race_items():
    questions, passages = [], {}
    for path in (DATA / "embrace", DATA / "expmrc" / "expmrc-race-dev.json"):
        for ds in formats.read(path):
            for p in ds.passages:
                passages[p.id] = p.text
                questions.extend(p.questions)
    return questions, passages


def test_every_trained_item_gets_its_out_of_fold_logits(model, race_items):
    questions, passages = race_items
    rows = [json.loads(line) for line in (DEFAULT / out_of_fold.FILE).read_text().splitlines()]
    by_id = {(r["id"], r["format"]): r for r in rows}
    scores = inference.score(model, questions, passages, ["standard", "shortcut"])
    assert len(scores) == len(questions) == 1726
    for q, s in zip(questions, scores):
        for fmt in ("standard", "shortcut"):
            row = by_id[(f"{q.source}:{q.id}", fmt)]
            f = s.formats[fmt]
            assert f.fold == row["fold"] and f.logits == row["logits"]
            expected = metrics.softmax(np.array([row["logits"]]), model.card.temperature_for(fmt))[0]
            assert f.probabilities == pytest.approx(list(expected))
    # the card's out-of-fold accuracy is what the served predictions give
    for fmt in ("standard", "shortcut"):
        acc = np.mean([s.formats[fmt].predicted == q.key for q, s in zip(questions, scores)])
        assert round(float(acc), 4) == model.card.metrics["out_of_fold"][fmt]["accuracy"]


def test_an_edited_copy_or_in_sample_request_runs_the_model(model, race_items):
    questions, passages = race_items
    q = questions[0]
    served = inference.score(model, [q], passages, ["shortcut"])[0].formats["shortcut"]
    assert served.fold is not None
    scratch = replace(q, alternatives=[*q.alternatives[:-1], "None of the answers are correct."])
    edited = inference.score(model, [scratch], passages, ["shortcut"])[0].formats["shortcut"]
    assert edited.fold is None
    own = inference.score(model, [q], passages, ["shortcut"], in_sample=True)[0].formats["shortcut"]
    assert own.fold is None and own.logits != served.logits
    # the stored prediction says where it came from
    extra = inference.score(model, [q], passages, ["shortcut"])[0].predictions()[0].extra
    assert extra["out_of_fold"] == served.fold
