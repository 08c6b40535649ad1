"""Models for the NOTA grid: an `inference` model as a scorer of (passage, stem, alternatives).

The scorer returns the raw logits (one per alternative), not probabilities: a cached
logit stays comparable to one computed in another call, which is what lets the grid
reuse the score of every alternative the transform did not touch.  The NOTA
alternative is marked to `inference.score` (`nota_indices`), so the shared input
formatting puts it in place of the question for cloze stems, as the seed does.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from desktop.domain.errors import ModelError
from desktop.domain.model import Question
from desktop.reports.nota_eval import ModelUnderTest, ScoreItem

PREFERRED_FORMAT = "standard"  # the seed's models see passage, question and option


def scorer_for(model, fmt: str, tokens_per_batch: int | None = None):
    """A `Scorer` that runs `inference.score` in one input format and returns logits."""
    import inference

    def score(items: Sequence[ScoreItem]) -> list[list[float]]:
        questions = [Question(id=str(i), passage_id=str(i), index=0, stem=stem, alternatives=list(alts), key=None)
                     for i, (_, stem, alts, _) in enumerate(items)]
        kwargs = {"tokens_per_batch": tokens_per_batch} if tokens_per_batch else {}
        out = inference.score(model, questions, [passage for passage, *_ in items], [fmt],
                              nota_indices=[ni for *_, ni in items], evidence=None, **kwargs)
        return [r.formats[fmt].logits for r in out]
    return score


def load_models(directories: Sequence[str], fmt: str | None = None, device: str = "auto") -> list[ModelUnderTest]:
    """Load each model directory; the column name is the card's name (made unique by its folder)."""
    import inference

    out, seen = [], set()
    for d in directories:
        model = inference.load_model(d, device=device)
        if model.fallback:  # --device cuda that ends on the CPU is said on a line of its own
            print(f"warning: {model.fallback}", file=sys.stderr)
        chosen = fmt or (PREFERRED_FORMAT if PREFERRED_FORMAT in model.formats else model.formats[0])
        if chosen not in model.formats:
            raise ModelError(f"model {d} was not trained for the {chosen} format "
                             f"(it serves {', '.join(model.formats)})")
        name = model.card.name or Path(d).name
        if name in seen:
            name = f"{name} ({Path(d).name})"
        seen.add(name)
        out.append(ModelUnderTest(name=name, scorer=scorer_for(model, chosen), fmt=chosen))
    return out
