"""Evidence sentences on real ExpMRC and EMBRACE items, scored by the official ExpMRC rules.

The numbers checked against come from the ExpMRC seed (Table 3: 48.0 evidence F1 is the
best baseline on RACE+ dev) and from the shipped model's answers (its logits on ExpMRC and
EMBRACE, which it never trained on, as the build's evaluation recorded them).
"""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from desktop.domain.expmrc_metric import evidence_f1, score_multiple_choice
from inference.evidence import sentences
from models.evaluation import evidence as E

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
ROWS = ROOT / "docs" / "model_runs" / "mpnet-4xh100-2026-11-27" / "eval_rows.jsonl.gz"


@pytest.fixture(scope="module")
def dataset():
    return json.loads((DATA / "expmrc" / "expmrc-race-dev.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def model_probs():
    out = {}
    for line in gzip.open(ROWS, "rt", encoding="utf-8"):
        r = json.loads(line)
        if r["format"] == "standard":
            z = np.array(r["logits"])
            p = np.exp(z - z.max())
            out[r["id"]] = p / p.sum()
    return out


def _predictions(dataset, method, answer_of):
    index = E.SentenceIndex([s["article"] for s in dataset["data"]])
    out = {}
    for s in dataset["data"]:
        for j, q in enumerate(s["questions"]):
            qid = f"{s['id']}-{j}"
            k, p = answer_of(s, j, qid)
            e = E.predict(method, s["article"], q, s["options"][j], k, p, index)
            out[qid] = {"answer": "ABCD"[k], "evidence": e.text if e else ""}
    return out


def test_evidence_is_a_stretch_of_whole_sentences(dataset):
    for s in dataset["data"][:30]:
        text = s["article"]
        bounds = sentences(text)
        starts, ends = {a for a, _ in bounds}, {b for _, b in bounds}
        for j, q in enumerate(s["questions"]):
            for method in E.METHODS:
                e = E.predict(method, text, q, s["options"][j], 0, None)
                assert e is not None and text[e.start:e.end] == e.text
                assert e.start in starts and e.end in ends


def test_better_method_beats_the_seeds_best_race_baseline_with_the_models_answers(dataset, model_probs):
    def answer(s, j, qid):
        p = model_probs[f"expmrc:{qid}"]
        return int(np.argmax(p)), list(p)

    scores = {m: score_multiple_choice(dataset, _predictions(dataset, m, answer)) for m in E.METHODS}
    best = float(scores[E.IDF_RECALL]["EVI_F1"])
    assert best > 48.0  # ExpMRC seed, Table 3: "Most Similar Sent. w/ Ques.", large PLM, RACE+ dev
    assert best > float(scores[E.WITH_QUESTION]["EVI_F1"]) > float(scores[E.OPTION_ONLY]["EVI_F1"])
    # same answers for every method: the evidence method does not touch the answer
    assert len({s["ANS_F1"] for s in scores.values()}) == 1


def test_with_question_baseline_beats_option_only_given_the_key(dataset):
    # the seed's ordering (Table 3: 44.5 vs 36.6 base, 48.0 vs 37.6 large) holds with gold answers too
    def gold(s, j, qid):
        return "ABCD".index(s["answers"][j]), None

    f1 = {m: float(score_multiple_choice(dataset, _predictions(dataset, m, gold))["EVI_F1"])
          for m in (E.WITH_QUESTION, E.OPTION_ONLY)}
    assert f1[E.WITH_QUESTION] > f1[E.OPTION_ONLY]


SIMILARITY_ONLY = E.Settings(beta=2.0, short_sentence=10, reader_weight=0.5, idf=True)


def test_method_carries_over_to_embrace_bases_of_the_key(model_probs):
    # chosen on ExpMRC; checked on another annotation: EMBRACE's basis spans of the key.  Without a
    # model run here, its similarity part alone, with the similarity settings of the earlier default
    # (β 2, the reader's weight ½: cross-validated before the reader's own sentence effects came in)
    from desktop.formats import embrace

    ds = embrace.read(DATA / "embrace" / "embrace_green.jsonl")
    ds = ds[0] if isinstance(ds, list) else ds
    index = E.SentenceIndex([p.text for p in ds.passages])
    got = {m: [] for m in (E.IDF_RECALL, E.WITH_QUESTION)}
    for p in ds.passages:
        for q in p.questions:
            refs = [s.text(p.text) for s in q.spans_with("basis", q.key)]
            probs = model_probs.get(f"embrace:{q.id}")
            if not refs or probs is None:
                continue
            k = int(np.argmax(probs))
            for m in got:
                e = E.predict(m, p.text, q.stem, q.alternatives, k, list(probs), index, settings=SIMILARITY_ONLY)
                got[m].append(evidence_f1(e.text, refs))
    assert len(got[E.IDF_RECALL]) > 150
    assert np.mean(got[E.IDF_RECALL]) > np.mean(got[E.WITH_QUESTION])


def test_unknown_method_is_refused():
    with pytest.raises(ValueError):
        E.predict("nearest-paragraph", "A. B.", "Q?", ["a", "b"], 0)
