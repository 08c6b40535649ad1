"""Rows of `mcqlens export predictions`: one per question, model and input format.

Columns: item_id, model, format, probs (JSON list in alternative order), predicted
(letter), entropy_bits, n_eff, mi_bits (empty unless the same model scored both the
standard and the shortcut format), evidence (the model's evidence sentence, on the
standard row, as `inference.score` stored it; empty otherwise).  Everything is recomputed from the stored
probabilities, so rows from any source of predictions agree with the seed's formulas.
"""
from __future__ import annotations

import json
import math
from typing import Iterable

COLUMNS = ("item_id", "model", "format", "probs", "predicted", "entropy_bits", "n_eff", "mi_bits", "evidence")
LETTERS = "ABCDEFGHIJ"


def entropy_bits(probs: Iterable[float]) -> float:
    return max(0.0, -sum(p * math.log2(p) for p in probs if p > 0))


def rows_for(item_id: str, predictions) -> list[dict]:
    """`predictions`: the domain `Prediction`s of one question (any models, any formats)."""
    by_model: dict[str, dict[str, list[float]]] = {}
    evidence: dict[tuple[str, str], str] = {}
    for p in predictions:
        if p.probabilities:
            by_model.setdefault(p.model_id, {})[p.input_format] = [float(x) for x in p.probabilities]
            evidence[(p.model_id, p.input_format)] = p.evidence or ""
    rows = []
    for model, formats in by_model.items():
        mi = None
        if "standard" in formats and "shortcut" in formats:
            mi = entropy_bits(formats["shortcut"]) - entropy_bits(formats["standard"])
        for fmt, probs in formats.items():
            h = entropy_bits(probs)
            best = max(range(len(probs)), key=probs.__getitem__)
            rows.append({"item_id": item_id, "model": model, "format": fmt, "probs": json.dumps(probs),
                         "predicted": LETTERS[best], "entropy_bits": h, "n_eff": 2.0 ** h,
                         "mi_bits": "" if mi is None else mi, "evidence": evidence[(model, fmt)]})
    return rows
