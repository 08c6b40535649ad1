"""The reader's own evidence: how much its answer rests on each sentence of the passage.

For a question scored in the standard format (C+Q+{O}), each sentence of the passage is taken
out in turn and the predicted alternative is scored again on what is left; the drop of its
logit is the sentence's effect.  A sentence the answer rests on costs the reader its
confidence when it is gone; a sentence it never used costs nothing.  `evidence_choice` mixes
these effects with its similarity score (`Settings.occlusion_weight`, chosen by
cross-validation in `models.evaluation.evidence_cv`).

Only the predicted alternative is re-scored (one sequence per sentence, not four): its logit is
what the choice rests on, and the other alternatives' sequences would change with the passage
too.  Sentences are those of `inference.evidence.sentences`, the spans `SentenceIndex` scores.
"""
from __future__ import annotations

from typing import Sequence

from inference import formatting


def sentence_effects(model, passage: str, stem: str, alternative: str, spans: Sequence[tuple[int, int]],
                     full_logit: float) -> list[float]:
    """Per sentence span, the predicted alternative's logit with the whole passage minus its
    logit with that sentence taken out (same runner, same truncation rules)."""
    if not spans:
        return []
    items = [[formatting.encoder_text(passage[:a] + passage[b:], stem, alternative, formatting.STANDARD)]
             for a, b in spans]
    enc = formatting.encode_pairs(model.tokenizer, items, model.card.max_length)
    z = model.runner.logits(enc)[:, 0]
    return [float(full_logit - x) for x in z]


def sentence_effects_one(model, passage: str, stem: str, alternatives: Sequence[str], predicted: int,
                         spans: Sequence[tuple[int, int]], full_logits: Sequence[float]) -> list[float]:
    """The same for a one-sequence model (`inference.one_sequence`), whose one pass scores every
    alternative: per sentence span, the predicted alternative's log-probability with the whole
    passage minus its log-probability with that sentence taken out (a drop in the softmax, since
    the logits of one pass move together)."""
    import numpy as np

    from inference import one_sequence

    if not spans:
        return []
    questions = [(passage[:a] + passage[b:], stem, list(alternatives)) for a, b in spans]
    z = model.runner.logits_one(one_sequence.encode(model.tokenizer, questions, formatting.STANDARD,
                                                    model.card.max_length))

    def logp(row) -> float:
        row = np.asarray(row, dtype=np.float64)
        row = row[np.isfinite(row)]
        top = row.max()
        return float(row[predicted] - top - np.log(np.exp(row - top).sum()))

    base = logp(full_logits)
    return [base - logp(row) for row in z]
