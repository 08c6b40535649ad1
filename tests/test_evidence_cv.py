"""Evidence settings are chosen on some folds of ExpMRC RACE+ dev and reported on the others (issue 18)."""
from __future__ import annotations

import json
from pathlib import Path

from desktop.domain import expmrc_metric
from models.evaluation import evidence as E
from models.evaluation import evidence_cv as CV

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
    # each fold's choice is the best on the other folds, recomputed by hand for fold 0 (IDF over each
    # item's own passage, as inference.score counts it)
    probs = _key_probabilities(dataset)
    train = [q for q in items if CV.fold_of(q["pid"], 5) != 0]
    means = {}
    for st in settings:
        f1 = [expmrc_metric.evidence_f1((E.idf_recall_options(E.SentenceIndex([q["passage"]]), q["passage"], q["stem"],
                                                              q["alternatives"],
                                                              probs[q["id"]], st) or E.EvidenceChoice(0, 0, "", 0, "")).text,
                                        q["references"]) for q in train]
        means[st] = 100 * sum(f1) / len(f1)
    best = max(settings, key=lambda st: means[st])
    assert result["choices"][0]["settings"] == best.__dict__
    assert abs(result["choices"][0]["train_evi_f1"] - means[best]) < 1e-9


def test_the_recorded_cross_validation_is_what_the_docs_say():
    from models.report.data import DEFAULT_RUN

    recorded = json.loads((DEFAULT_RUN / "evidence_cv.json").read_text(encoding="utf-8"))
    assert recorded["questions"] == 561 and recorded["folds"] == 5
    # every question is held out exactly once, so the pooled held-out score covers all 561
    assert len(recorded["choices"]) == 5
    doc = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    h = recorded["held_out"]
    assert (f"held out, pooled over {recorded['questions']} questions, EVI_F1 {h['EVI_F1']:.1f}, "
            f"ANS_F1 {h['ANS_F1']:.1f}, ALL_F1 {h['ALL_F1']:.1f}") in doc
    # the card names the settings most folds chose
    from inference.card import load_card
    card = load_card(Path(__file__).resolve().parents[1] / "models" / "default")
    assert card.metrics["evidence_cv"]["held_out"] == h


def test_the_readers_sentence_effects_decide_the_evidence_as_much_as_their_weight_says():
    """With the occlusion weight at 1 the sentence the reader needs most wins; at 0 the similarity
    alone decides (real ExpMRC passage; the effects are set by hand, the choice is the method's)."""
    dataset = json.loads(DATA.read_text(encoding="utf-8"))
    q = CV.questions(dataset)[0]
    index = E.SentenceIndex([q["passage"]])
    sims = E.similarity_scores(index, q["passage"], q["stem"], q["alternatives"], None)
    plain = E.idf_recall_options(index, q["passage"], q["stem"], q["alternatives"], None)
    least = min(range(len(sims)), key=lambda i: sims[i])  # the sentence the similarity likes least
    effects = {i: (5.0 if i == least else 0.1) for i in range(len(sims))}
    st = E.Settings(short_sentence=0, occlusion_weight=1.0)
    chosen = E.idf_recall_options(index, q["passage"], q["stem"], q["alternatives"], None, st, effects)
    a, b, _ = index.of(q["passage"])[least]
    assert (chosen.start, chosen.end) == (a, b) and (plain.start, plain.end) != (a, b)
    st0 = E.Settings(short_sentence=0, occlusion_weight=0.0)
    same = E.idf_recall_options(index, q["passage"], q["stem"], q["alternatives"], None, st0, effects)
    assert (same.start, same.end) == (E.idf_recall_options(index, q["passage"], q["stem"], q["alternatives"], None,
                                                           st0).start, E.idf_recall_options(
        index, q["passage"], q["stem"], q["alternatives"], None, st0).end)
    # only the `occlusion_top` most similar sentences are re-scored
    top = E.occlusion_candidates(sims, E.Settings(occlusion_weight=0.5, occlusion_top=3))
    assert len(top) == 3 and all(sims[i] >= sorted(sims)[-3] for i in top)


def test_sentence_effects_are_computed_for_the_grids_candidates_only_and_cached(tmp_path):
    """The reader re-scores only the sentences some setting of the grid asks for (the union of
    their `occlusion_candidates`); the others stay None, and a second run reads the cache."""
    dataset = json.loads(CV.DATASET.read_text(encoding="utf-8"))
    dataset = {"data": dataset["data"][:2]}
    items = CV.questions(dataset)
    probs = {q["id"]: [1.0 / len(q["alternatives"])] * len(q["alternatives"]) for q in items}
    tiny = Path(__file__).resolve().parent / "data" / "tiny_model"
    cache = tmp_path / "effects.json"
    effects = CV.model_effects(dataset, probs, tiny, cache)
    index_of = CV._index_of()
    occl = [st for st in CV.grid() if st.occlusion_weight > 0]
    for q in items:
        index = index_of(q["passage"])
        wanted = set()
        for st in occl:
            sims = E.similarity_scores(index, q["passage"], q["stem"], q["alternatives"], probs[q["id"]], st)
            wanted.update(E.occlusion_candidates(sims, st))
        got = effects[q["id"]]
        assert len(got) == len(index.of(q["passage"]))
        assert {i for i, e in enumerate(got) if e is not None} == wanted
        assert len(wanted) < len(got)  # some sentences were never asked for
    assert CV.model_effects(dataset, probs, tiny, cache) == effects  # read back, not recomputed
