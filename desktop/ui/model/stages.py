"""The model's work on one item in three stages, as plain functions (no Qt, no SQL): run in the
model's thread (`scoring_worker.py`), one stage at a time, so that the window shows each as
soon as it exists.

1. `PROBABILITIES`: both formats' probabilities, N and MI (`inference.score(...,
   evidence=None)`), in the order `mcqlens score` scores them (standard, then shortcut), so
   the rows are stored in its order too.  When the evidence is still to come, the standard
   row carries `extra["evidence_pending"] = True`.
2. `EVIDENCE`: the model's evidence sentence for the scores of stage 1
   (`inference.add_evidence`); the standard row is then exactly the row `inference.score`
   with its evidence gives, the row `mcqlens score` stores.
3. `GIVEAWAY`: the shortcut model's give-away words (`inference.giveaway.explain`, what
   `mcqlens explain` stores).

`needs(...)` says which stages an item still lacks, from what is stored.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from desktop.domain.model import Prediction, Question

PROBABILITIES = "probabilities"
EVIDENCE = "evidence"
GIVEAWAY = "giveaway"
STAGES = (PROBABILITIES, EVIDENCE, GIVEAWAY)
PENDING = "evidence_pending"  # extra of a standard row stored before its evidence
STANDARD = "standard"


def formats_of(model) -> list[str]:
    """The formats `mcqlens score` scores with this model, in its order."""
    from desktop.commands.score import _formats

    return _formats(None, model.formats)


def stored(model, question: Question) -> dict[str, Prediction]:
    """This model's stored rows of the item, by format."""
    return {p.input_format: p for p in question.predictions if p.model_id == model.id and p.probabilities}


def evidence_pending(p: Prediction | None) -> bool:
    return p is not None and bool(p.extra.get(PENDING))


def needs(model, question: Question, passage_text: str, explanation_current: bool | None = None) -> list[str]:
    """The stages the item still lacks for `model` (`explanation_current`: whether a current
    explanation is stored; None: give-away words are not asked for)."""
    fmts = formats_of(model)
    have = stored(model, question)
    out = []
    if any(f not in have for f in fmts):
        out.append(PROBABILITIES)
    if STANDARD in fmts and passage_text and (out or evidence_pending(have.get(STANDARD))):
        out.append(EVIDENCE)
    if explanation_current is False and giveaway_served(model):
        out.append(GIVEAWAY)
    return out


def giveaway_served(model) -> bool:
    from inference import giveaway as G

    return G.FORMAT in model.card.formats


# ---------------------------------------------------------------------------- stage 1

def score_probabilities(model, question: Question, passage_text: str, cancel: Callable[[], bool] | None = None,
                        rescore: bool = False):
    """(QuestionScores of every format, rows to store) or None when cancelled.  Formats already
    stored are not scored again (unless `rescore`); MI is completed from them as `mcqlens
    score` completes it."""
    import inference
    from desktop.commands.score import _rows

    fmts = formats_of(model)
    have = {} if rescore else {f: replace(p, extra=dict(p.extra)) for f, p in stored(model, question).items()}
    missing = [f for f in fmts if f not in have]
    if not missing:
        return None
    out = inference.score(model, [question], [passage_text], missing, cancel=cancel, evidence=None)
    if not out:
        return None
    result = out[0]
    rows = [p for _, p in _rows(result, have)]
    pending = STANDARD in result.formats and bool(passage_text)
    if pending:
        rows = [replace(p, extra={**p.extra, PENDING: True}) if p.input_format == STANDARD else p for p in rows]
    full = scores_from_predictions(model, question.id, [*have.values(), *rows]) or result
    return full, rows


def scores_from_predictions(model, item_id: str, predictions):
    """The QuestionScores that stored rows of `model` came from (for the evidence of rows
    stored in an earlier session), in `formats_of` order; None when a row lacks what is needed."""
    from inference import FormatScores, QuestionScores

    by = {p.input_format: p for p in predictions if p.model_id == model.id and p.probabilities}
    r = QuestionScores(item_id, model.id, model_name=model.card.name)
    try:
        for f in formats_of(model):
            p = by.get(f)
            if p is None:
                continue
            x = p.extra
            r.formats[f] = FormatScores(f, [float(v) for v in p.probabilities], int(x["predicted"]),
                                        float(x["entropy_bits"]), float(x["n_eff"]),
                                        [float(v) for v in x["logits"]], float(x["temperature"]))
    except (KeyError, TypeError, ValueError):
        return None
    return r if r.formats else None


# ---------------------------------------------------------------------------- stage 2

def score_evidence(model, scores, question: Question, passage_text: str) -> list[Prediction]:
    """The standard row with the model's evidence (and without the pending mark): the row
    `inference.score` gives with its evidence."""
    import inference

    scores.evidence = None
    inference.add_evidence(model, [scores], [question], [passage_text])
    return [p for p in scores.predictions() if p.input_format == STANDARD]


# ---------------------------------------------------------------------------- stage 3

def explanation_is_current(store, model, question: Question) -> bool:
    """Whether the store holds this model's give-away words for the item's text."""
    from inference import giveaway as G

    try:
        data = store.explanation(question.id, model.id, G.variant())
        ex = G.Explanation.from_json(data) if data else None
    except Exception:  # noqa: BLE001 - unreadable: computed again
        return False
    return G.current(ex, question, model.id, G.variant())


def explain(model, question: Question, cancel: Callable[[], bool] | None = None):
    """The give-away words (an `inference.giveaway.Explanation`), or None when cancelled."""
    from inference import giveaway as G

    got = G.explain(model, [question], cancel=cancel)
    return got[0] if got else None
