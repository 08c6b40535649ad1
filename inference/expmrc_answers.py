"""ExpMRC predictions {"<pid>-<j>": {"answer": "C", "evidence": "..."}} from the one scoring path.

`mcqlens expmrc predict` and the model report (`models.report`) both call `answers`, so
neither reaches into the other: the report does not import a CLI module.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass
class ExpmrcAnswers:
    predictions: dict[str, dict[str, str]]
    out_of_fold: int  # answers served from the model directory's out-of-fold file
    in_sample: int  # answers of the model on items it trained on (no out-of-fold entry applied)


def answers(model, questions: Sequence, passages, method: str, in_sample: bool = False,
            progress=None) -> ExpmrcAnswers:
    """Answer (standard format) and evidence by `method` for every question, via `inference.score`."""
    import inference
    from desktop.domain.model import LETTERS

    scores = inference.score(model, questions, passages, ["standard"], in_sample=in_sample, evidence=method,
                             progress=progress)
    out = {}
    for s in scores:
        f = s.formats["standard"]
        out[s.item_id] = {"answer": LETTERS[f.predicted], "evidence": s.evidence.text if s.evidence else ""}
    return ExpmrcAnswers(out, sum(s.formats["standard"].fold is not None for s in scores),
                         sum(s.formats["standard"].in_sample for s in scores))
