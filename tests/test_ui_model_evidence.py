"""The model panel's evidence baseline and flags, checked against the ExpMRC seed and the data.

* ExpMRC RACE+ dev (561 questions, 2 references each): the "most similar sentence"
  baselines of the seed (section 4.1), fed the key as the predicted answer.  The seed
  reports, with BERT-base answers (62.4% accurate), 36.6 evidence F1 without the question
  and 44.5 with it; with the key both must do at least as well, and the question must help.
* Sentences are split on '.', '!' and '?' as the seed says, and offsets point into the
  passage text exactly.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from desktop import formats
from desktop.domain import expmrc_metric
from desktop.domain.model import Prediction, Question
from desktop.app import model_scoring as ms
from inference import evidence

ROOT = Path(__file__).resolve().parents[1]
EXPMRC = ROOT.parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"
SEED_RACE_DEV_EVIDENCE = {evidence.OPTION_ONLY: 36.6, evidence.WITH_QUESTION: 44.5}  # Table 3, base


@pytest.fixture(scope="module")
def expmrc():
    [ds] = formats.read(str(EXPMRC))
    return ds


def _references(q):
    # the references as the dataset gives them (the reader keeps the original string)
    return [s.extra.get("reference", "") for s in q.spans if s.role == "evidence"]


def test_most_similar_sentence_on_expmrc_race_dev(expmrc):
    scores = {}
    n = 0
    for method in evidence.METHODS:
        total, n = 0.0, 0
        for p in expmrc.passages:
            for q in p.questions:
                ev = evidence.predict_evidence(p.text, q.stem, q.alternatives, q.key, method)
                assert ev is not None and p.text[ev.start:ev.end] == ev.text
                total += expmrc_metric.evidence_f1(ev.text, _references(q))
                n += 1
        scores[method] = 100 * total / n
    assert n == 561
    for method, seed in SEED_RACE_DEV_EVIDENCE.items():
        assert scores[method] >= seed, (method, scores[method])
    assert scores[evidence.WITH_QUESTION] > scores[evidence.OPTION_ONLY]


def test_sentences_split_on_the_seed_delimiters(expmrc):
    p = expmrc.passages[0]
    spans = evidence.sentences(p.text)
    assert spans and all(p.text[s:e].strip() == p.text[s:e] for s, e in spans)
    # every sentence but the last of a paragraph ends with a delimiter
    for s, e in spans:
        chunk = p.text[s:e]
        nxt = p.text[e:e + 1]
        assert chunk[-1] in ".!?\"'”’)]" or nxt in ("\n", "")
    # a reference sentence of the first question is one of the sentences
    ref = _references(p.questions[0])[0]
    assert ref in [p.text[s:e] for s, e in spans]


def _q(key, n=4):
    return Question(id="x", passage_id="p", index=0, stem="s", alternatives=[str(i) for i in range(n)], key=key)


def _pred(fmt, probs, **extra):
    return Prediction(model_id="m", input_format=fmt, probabilities=probs, extra=extra)


def test_flags_follow_the_thresholds():
    # shortcut sure of the key (N = 2^H ≤ 1.5), standard sure too: no reading needed, context barely helps
    sure = [0.95, 0.02, 0.02, 0.01]
    h = -sum(x * math.log2(x) for x in sure)
    view = ms.view_of(_q(0), [_pred("shortcut", sure), _pred("standard", sure)])
    assert view.formats["shortcut"].n_eff == pytest.approx(2 ** h) and 2 ** h <= ms.SHORTCUT_N_MAX
    assert view.flags() == [ms.FLAG_NO_READING, ms.FLAG_LOW_MI]
    assert view.mi_bits == pytest.approx(0.0)
    # the same shortcut, but the key is another alternative: not "answerable without reading"
    assert ms.view_of(_q(1), [_pred("shortcut", sure)]).flags() == []
    # uniform without the passage, certain with it: MI = 2 bits - H(standard), context helps
    view = ms.view_of(_q(0), [_pred("shortcut", [0.25] * 4), _pred("standard", sure)])
    assert view.mi_bits == pytest.approx(2.0 - h)
    assert view.flags() == []
    assert ms.model_facts(Question(**{**_q(0).__dict__, "predictions": [_pred("shortcut", [0.25] * 4),
                                                                            _pred("standard", sure)]}))[
        "mi_bits"] == pytest.approx(2.0 - h)


def test_rejection_and_agreement():
    p = _pred("standard", [0.5, 0.5], n_eff=2.0)
    r = ms.rejection(ms.rejection(p, "anna"), "anna")
    assert r.extra["evidence_rejected_by"] == ["anna"] and "evidence_rejected_by" not in p.extra
    sentence = "Materials to teach teenagers how to get enough sleep will be offered to schools across Scotland."
    assert ms.evidence_agreement(sentence, [sentence]) == 1.0
    assert ms.evidence_agreement(sentence, []) is None
    half = "Materials to teach teenagers"
    assert ms.evidence_agreement(sentence, [half]) == pytest.approx(
        expmrc_metric.evidence_f1(sentence, [half]))
