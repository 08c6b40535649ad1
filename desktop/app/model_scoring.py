"""What the model panel computes, as plain functions (no Qt, no SQL): run off the GUI thread.

The worker thread calls `score_item` and `whatif_shortcut` with plain
domain objects; the GUI thread stores what they return (`store.add_predictions`) and
turns stored predictions back into what the panel shows with `view_of`.

Flags (World Knowledge seed):

* "answerable without reading?": the shortcut model (Q+{O}, no passage) has an
  effective number of options N = 2^H ≤ 1.5 — it has all but settled on one
  alternative — and that alternative is the key.  The seed's human study found such
  questions answerable by people without the passage too (92% on the lowest-entropy
  100); the annotator decides whether to tag it.
* "context barely helps": the contextual mutual information I = H(shortcut) −
  H(standard) ≤ 0.25 bits, i.e. reading the passage shrinks the effective number of
  options by less than a factor 2^0.25 ≈ 1.19 (from 4 to 3.4 at most).  Full certainty
  gained from the passage on a 4-option item is 2 bits; the seed's low-MI questions gave
  humans a 22% gain from the passage against 71% for high-MI ones.  0.25 bits is an
  eighth of that range: low enough that flagged items are clearly passage-independent
  for the model, high enough to catch more than the exact zeros.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import inference
from desktop.domain.expmrc_metric import evidence_f1
from desktop.domain.model import EVIDENCE, MODEL, MODEL_ACCEPTED, Prediction, Question

SHORTCUT = "shortcut"
STANDARD = "standard"
FORMATS = (SHORTCUT, STANDARD)
NOTATION = {SHORTCUT: "Q+{O}", STANDARD: "C+Q+{O}"}
SHORTCUT_N_MAX = 1.5  # "answerable without reading?" at or below this N
LOW_MI_BITS = 0.25  # "context barely helps" at or below this MI
NOTA_TEXT = "None of the answers are correct."  # the None-of-the-above seed's alternative
ANSWERABLE_WITHOUT_READING = "answerable_without_reading"  # desktop.domain.typology key
FLAG_NO_READING = "answerable without reading?"
FLAG_LOW_MI = "context barely helps"


def say_which_model(directory: str | Path) -> None:
    """One line on stderr naming the model the window uses (`mcqlens gui` says it, as `mcqlens score` does)."""
    try:
        card = json.loads((Path(directory) / "card.json").read_text(encoding="utf-8"))
        print(f"model {card.get('id')} ({card.get('name')}): {directory}", file=sys.stderr)
    except (OSError, ValueError):
        print(f"model: {directory} (no readable card.json there)", file=sys.stderr)


def load(directory: str | Path, cancel=None):
    """The model for the panel; ModelError (with the reason in words) when there is none, or when
    `cancel()` turned true (the window closed) before a part of it loaded."""
    return inference.load_model(directory, beside_window=True, cancel=cancel)


# ---------------------------------------------------------------------------- scoring

def _formats(model) -> list[str]:
    return [f for f in FORMATS if f in model.card.formats]


def score_item(model, question: Question, passage_text: str,
               cancel: Callable[[], bool] | None = None) -> list[Prediction] | None:
    """Both formats (those the model serves) and the evidence for one item; None when cancelled.

    The rows are `inference.score`'s, exactly what `mcqlens score` stores for the item."""
    out = inference.score(model, [question], [passage_text], _formats(model), cancel=cancel)
    if not out:
        return None
    return out[0].predictions()


def score_chunk(model, items: Sequence[tuple[Question, str]],
                cancel: Callable[[], bool] | None = None) -> list[tuple[str, Prediction]]:
    """(item id, Prediction) rows for the items scored before `cancel()` turned true."""
    if not items:
        return []
    out = inference.score(model, [q for q, _ in items], [t for _, t in items], _formats(model), cancel=cancel)
    return [(r.item_id, p) for r in out for p in r.predictions()]


@dataclass
class WhatIf:
    """The shortcut probabilities of a scratch copy."""

    probabilities: list[float]


def whatif_shortcut(model, question: Question, alternatives: Sequence[str],
                    nota_index: int | None = None) -> WhatIf:
    """Shortcut probabilities for a scratch copy of the item with other alternatives.

    The stored question is not touched: a copy carries the edited alternatives.
    `nota_index` marks the alternative that is the None-of-the-above text, which a
    cloze stem formats differently (inference.formatting).
    """
    scratch = replace(question, alternatives=list(alternatives), spans=[], predictions=[])
    fmt = SHORTCUT if SHORTCUT in model.card.formats else model.card.formats[0]
    out = inference.score(model, [scratch], [""], [fmt], nota_indices=[nota_index], evidence=None)
    f = out[0].formats[fmt]
    return WhatIf(list(f.probabilities))


# ---------------------------------------------------------------------------- reading back

@dataclass
class FormatView:
    format: str
    probabilities: list[float]
    predicted: int
    n_eff: float


@dataclass
class ModelView:
    """What the panel shows for one item and one model."""

    model_id: str
    model_name: str
    key: int | None
    formats: dict[str, FormatView] = field(default_factory=dict)
    mi_bits: float | None = None
    evidence: tuple[int, int, str] | None = None  # start, end, text of the model's evidence
    evidence_rejected_by: list[str] = field(default_factory=list)
    evidence_pending: bool = False  # the probabilities are stored, the evidence is still to come

    @property
    def shortcut(self) -> FormatView | None:
        return self.formats.get(SHORTCUT)

    @property
    def answerable_without_reading(self) -> bool:
        s = self.shortcut
        return s is not None and self.key is not None and s.n_eff <= SHORTCUT_N_MAX and s.predicted == self.key

    @property
    def context_barely_helps(self) -> bool:
        return self.mi_bits is not None and self.mi_bits <= LOW_MI_BITS

    def flags(self) -> list[str]:
        out = []
        if self.answerable_without_reading:
            out.append(FLAG_NO_READING)
        if self.context_barely_helps:
            out.append(FLAG_LOW_MI)
        return out


def _n_eff(p: Prediction) -> float:
    if "n_eff" in p.extra:
        return float(p.extra["n_eff"])
    h = -sum(x * math.log2(x) for x in p.probabilities if x > 0)
    return 2.0 ** h


def view_of(question: Question, predictions: Sequence[Prediction] | None = None,
            model_id: str | None = None) -> ModelView | None:
    """The stored predictions of `model_id` (default: the model with most formats) as a view."""
    preds = [p for p in (question.predictions if predictions is None else predictions)
             if p.input_format in FORMATS and p.probabilities]
    if model_id is not None:
        preds = [p for p in preds if p.model_id == model_id]
    if not preds:
        return None
    if model_id is None:
        counts: dict[str, int] = {}
        for p in preds:
            counts[p.model_id] = counts.get(p.model_id, 0) + 1
        model_id = max(counts, key=counts.get)
        preds = [p for p in preds if p.model_id == model_id]
    view = ModelView(model_id=model_id, model_name=str(preds[0].extra.get("model_name", model_id)),
                     key=question.key)
    for p in preds:
        probs = [float(x) for x in p.probabilities]
        view.formats[p.input_format] = FormatView(p.input_format, probs,
                                                  max(range(len(probs)), key=probs.__getitem__), _n_eff(p))
        if p.input_format == STANDARD and p.extra.get("evidence_pending"):
            view.evidence_pending = True
        if p.input_format == STANDARD and p.evidence and "evidence_start" in p.extra:
            view.evidence = (int(p.extra["evidence_start"]), int(p.extra["evidence_end"]), p.evidence)
            view.evidence_rejected_by = list(p.extra.get("evidence_rejected_by", []))
    s, c = view.formats.get(SHORTCUT), view.formats.get(STANDARD)
    if s is not None and c is not None:
        view.mi_bits = math.log2(s.n_eff) - math.log2(c.n_eff)  # H = log2 N
    return view


def model_facts(question: Question) -> dict:
    """Navigator facts: shortcut N, MI and the review flags (None/[] without predictions)."""
    view = view_of(question)
    if view is None:
        return {"shortcut_n": None, "mi_bits": None, "review_flags": []}
    s = view.shortcut
    return {"shortcut_n": s.n_eff if s else None, "mi_bits": view.mi_bits, "review_flags": view.flags()}


def rejection(prediction: Prediction, annotator: str) -> Prediction:
    """The standard-format prediction with `annotator` added to those who rejected its evidence."""
    extra = dict(prediction.extra)
    who = list(extra.get("evidence_rejected_by", []))
    if annotator not in who:
        who.append(annotator)
    extra["evidence_rejected_by"] = who
    return replace(prediction, extra=extra)


# ---------------------------------------------------------------------------- agreement

def evidence_agreement(model_evidence: str, annotator_evidence: Sequence[str]) -> float | None:
    """ExpMRC evidence F1 (0..1) of the model's evidence against the annotator's spans; None if either is missing."""
    if not model_evidence or not annotator_evidence:
        return None
    return evidence_f1(model_evidence, annotator_evidence)


def agreement_over(datasets, annotator: str, model_id: str) -> tuple[dict[str, float], dict[str, str]]:
    """The stored state of the spot-check: per item the evidence F1 of `model_id`'s evidence
    against `annotator`'s evidence spans, and the decisions the store shows (a span of
    origin model-accepted: accepted; the annotator among those who rejected: rejected)."""
    f1: dict[str, float] = {}
    decisions: dict[str, str] = {}
    for ds in datasets:
        for p in ds.passages:
            for q in p.questions:
                view = view_of(q, model_id=model_id)
                if view is None or view.evidence is None:
                    continue
                mine = [s for s in q.spans if s.role == EVIDENCE and s.annotator == annotator and s.origin != MODEL]
                score = evidence_agreement(view.evidence[2], [s.text(p.text) for s in mine])
                if score is not None:
                    f1[q.id] = score
                if any(s.origin == MODEL_ACCEPTED for s in mine):
                    decisions[q.id] = "accepted"
                elif annotator in view.evidence_rejected_by:
                    decisions[q.id] = "rejected"
    return f1, decisions
