"""ExpMRC predictions {"<pid>-<j>": {"answer": "C", "evidence": "..."}} from the one scoring path.

`mcqlens expmrc predict` and the model report (`models.report`) both call `answers`, so
neither reaches into the other: the report does not import a CLI module.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from desktop.domain.model import LETTERS


@dataclass
class ExpmrcAnswers:
    predictions: dict[str, dict[str, str]]


def answers(model, questions: Sequence, passages, method: str, progress=None) -> ExpmrcAnswers:
    """Answer (standard format) and evidence by `method` for every question, via `inference.score`."""
    import inference

    scores = inference.score(model, questions, passages, ["standard"], evidence=method, progress=progress)
    out = {}
    for s in scores:
        f = s.formats["standard"]
        out[s.item_id] = {"answer": LETTERS[f.predicted], "evidence": s.evidence.text if s.evidence else ""}
    return ExpmrcAnswers(out)
