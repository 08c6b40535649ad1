"""Model probabilities for MCQ items with ONNX Runtime (GPU or CPU).

    model = load_model("models/default")            # ModelError when missing/corrupt
    scores = score(model, questions, passages, ["standard", "shortcut"])
    scores[0].formats["shortcut"].n_eff, scores[0].mi_bits, scores[0].evidence
    store.add_predictions([(s.item_id, p) for s in scores for p in s.predictions()])
    first = score(model, questions, passages, formats, evidence=None)   # probabilities only
    add_evidence(model, first, questions, passages)                     # then the evidence

Per question and input format: the probabilities over the alternatives after the
format's temperature, the predicted alternative, the entropy in bits, the effective
number of options N = 2^H, and — when both standard and shortcut are scored — the
contextual mutual information I = H(shortcut) − H(standard) (World Knowledge seed);
and, with the standard format and a passage, the model's evidence sentence
(`inference.evidence_choice`).  `score` is the one scoring path: `mcqlens score`, the
window's model panel and what-if tab, `mcqlens expmrc predict` and `mcqlens nota eval`
all call it, and `QuestionScores.predictions()` is what every one of them stores.

Only onnxruntime, tokenizers, numpy and onnx are needed (never torch or Qt); onnxruntime
is imported when a model is loaded, not when this package is.  onnx rewrites a graph into
its CPU layout at load (`inference.cpu_graph`); without it the shipped graph runs as it is.
"""
from __future__ import annotations

from desktop.domain.errors import ModelError
from inference import evidence_choice, formatting, metrics
from inference.batching import (DEFAULT_TOKENS_PER_BATCH, GPU_TOKENS_PER_BATCH, UNPADDED_TOKENS_PER_BATCH,
                                length_batches)
from inference.model import Model, load_model
from inference.scoring import (EVIDENCE_MAX_CHARS, FormatScores, QuestionScores, add_evidence, score,
                               scores_from_logits)

__all__ = ["Model", "FormatScores", "QuestionScores", "load_model", "score", "add_evidence", "evidence_choice", "scores_from_logits",
           "length_batches", "ModelError", "metrics", "formatting", "DEFAULT_TOKENS_PER_BATCH",
           "UNPADDED_TOKENS_PER_BATCH", "GPU_TOKENS_PER_BATCH", "EVIDENCE_MAX_CHARS"]
