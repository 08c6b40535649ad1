"""Evidence settings are chosen on some folds of ExpMRC RACE+ dev and reported on the others (issue 18)."""
from __future__ import annotations

import json
from pathlib import Path

from desktop.domain import expmrc_metric
from models import evidence as E
from models import evidence_cv as CV

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


def _key_probabilities(dataset):
    # the key as the reader's answer: the test needs no model, and the choice of settings still matters
    return {q["id"]: [float(a == q["key"]) for a in range(len(q["alternatives"]))] for q in CV.questions(dataset)}


def test_folds_split_by_passage_and_every_question_is_scored_once_held_out():
    dataset = json.loads(DATA.read_text(encoding="utf-8"))
    items = CV.questions(dataset)
    assert len(items) == 561  # ExpMRC RACE+ dev
    settings = [E.DEFAULT_SETTINGS, E.Settings(beta=1.0, short_sentence=0, reader_weight=0.5, idf=False)]
    result = CV.cross_validate(dataset, _key_probabilities(dataset), k=5, settings=settings)
    assert sum(c["questions"] for c in result["choices"]) == 561
    assert sum(c["passages"] for c in result["choices"]) == len(dataset["data"])  # no passage in two folds
    # pooled held-out F1 is the question-weighted mean of the folds' held-out F1
    pooled = sum(c["held_out_evi_f1"] * c["questions"] for c in result["choices"]) / 561
    assert abs(pooled - result["held_out"]["EVI_F1"]) < 1e-9
    # each fold's choice is the best on the other folds, recomputed by hand for fold 0
    index = E.SentenceIndex([s["article"] for s in dataset["data"]])
    probs = _key_probabilities(dataset)
    train = [q for q in items if CV.fold_of(q["pid"], 5) != 0]
    means = {}
    for st in settings:
        f1 = [expmrc_metric.evidence_f1((E.idf_recall_options(index, q["passage"], q["stem"], q["alternatives"],
                                                              probs[q["id"]], st) or E.EvidenceChoice(0, 0, "", 0, "")).text,
                                        q["references"]) for q in train]
        means[st] = 100 * sum(f1) / len(f1)
    best = max(settings, key=lambda st: means[st])
    assert result["choices"][0]["settings"] == best.__dict__
    assert abs(result["choices"][0]["train_evi_f1"] - means[best]) < 1e-9


def test_the_recorded_cross_validation_is_what_the_docs_say():
    recorded = json.loads((Path(__file__).resolve().parents[1] / "docs" / "model_runs" / "default" /
                           "evidence_cv.json").read_text(encoding="utf-8"))
    assert recorded["questions"] == 561 and recorded["folds"] == 5
    doc = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    assert CV.markdown(recorded) in doc
