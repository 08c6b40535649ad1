"""What gives the key away: the words of the stem and of each alternative that the shortcut
model (Q+{O}, no passage) leans on, by occlusion.

    explanations = explain(model, questions)              # one Explanation per question
    explanations[0].giveaway()[0]   # Attribution(word="always", element="B", start=12, end=18, effect=0.41)
    explanations[0].together        # WordSet(words=[...3 Units], effect=0.62): their joint effect

For each item the shortcut format is scored once as stored and once per *unit* (a word, or
a short phrase of adjacent words) with that unit taken out — deleted, or replaced by the
tokenizer's mask token.  A unit's *effect* is the drop in the probability of the
alternative the model predicts on the intact item: 0.41 means that without the word the
predicted alternative's probability falls by 41 points; a negative effect is a word that
argues against the prediction.  In the default "screened" scope the function words are first
taken out in groups and alone only where their group takes enough away; then the sets of three
of the strongest words are taken out together and the one whose joint deletion takes the most
away is the explanation's `together` set, with that *joint* effect (inference.giveaway_search
holds the stages).  Every occluded copy of every item in a call goes to
`inference.score` together, so it is batched by length like any scoring run, and on the CPU
a token sequence that recurs (the alternatives a stem word's removal does not touch are the
same sequences as the intact item's) is encoded once.

Words are found on the element's text exactly as stored: `text[start:end] == word`, so the
window can shade them and an export can point at them.  A word is a run of letters and
digits (any script) joined by inner hyphens or apostrophes ("middle-aged", "don't",
"l'été") or, between digits, by a point or a comma ("3.5", "1,000"); underscores (the gaps
of cloze stems) and punctuation are never words.

The probabilities explained are the model's own output on the item (`inference.score`).

No torch, no Qt: the command line (`mcqlens explain`), the window's Why? view, the report
and the benchmark (benchmarks/bench_giveaway.py) all call this module.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Callable, Sequence

from desktop.domain.errors import ModelError
from inference import formatting
from inference.giveaway_result import (  # noqa: F401 - the module's public names, as before
    ALL,
    Attribution,
    CONTENT,
    COPIES_PER_CALL,
    DEFAULT_METHOD,
    DEFAULT_SCOPE,
    DEFAULT_TOGETHER,
    DELETE,
    EFFECT_DIGITS,
    Explanation,
    FORMAT,
    FUNCTION_WORDS,
    MASK,
    METHODS,
    MIN_EFFECT,
    SCOPES,
    SCREEN_MIN,
    SCREEN_RANK,
    SCREENED,
    STEM,
    Unit,
    VERSION,
    WordSet,
    element_name,
    element_order,
    variant,
)
from inference.giveaway_search import Search
from inference.giveaway_units import (  # noqa: F401 - the module's public names, as before
    fingerprint,
    keep_only,
    occlude,
    units,
    words,
)


# ---------------------------------------------------------------------------- units

def mask_token(tokenizer) -> str | None:
    """The tokenizer's mask token as text ("[MASK]", "<mask>"), or None when it has none."""
    try:
        added = tokenizer.get_added_tokens_decoder()
    except AttributeError:  # an older tokenizers: ask for the usual names
        added = {}
    for token in added.values():
        if getattr(token, "special", True) and "mask" in token.content.lower():
            return token.content
    for name in ("[MASK]", "<mask>"):
        if tokenizer.token_to_id(name) is not None:
            return name
    return None


# ---------------------------------------------------------------------------- scoring

def check_model(model) -> None:
    if FORMAT not in model.card.formats:
        raise ModelError(f"model {model.id} does not serve the shortcut (Q+{{O}}) format "
                         f"(it serves {', '.join(model.card.formats)}); give-away words explain that format")


def shortcut_probabilities(model, questions: Sequence, cancel: Callable[[], bool] | None = None):
    """The shortcut format's `inference.FormatScores` of every question, in order; None for those not scored before `cancel()` turned true.

    Each (stem, alternative) sequence is encoded once however many questions share it: an
    occluded copy differs from its item in one element, so taking out a word of an alternative
    changes one of its sequences and only a stem word changes them all.  The encoder scores
    every sequence on its own (the logits of a question are its sequences' logits side by
    side), so the sequences go to `inference.score` as one-alternative questions, batched by
    length as any scoring run; the softmax over each question's alternatives is taken here
    with the format's temperature, as `inference.score` takes it."""
    import numpy as np

    import inference

    if not questions:
        return []
    if getattr(model, "one_sequence", False):  # one pass reads every alternative: score each copy whole
        scored = inference.score(model, list(questions), None, [FORMAT], item_ids=[str(i) for i in range(len(questions))],
                                 evidence=None, cancel=cancel)
        by_id = {int(r.item_id): r.formats.get(FORMAT) for r in scored}
        return [by_id.get(i) for i in range(len(questions))]
    index: dict[str, int] = {}
    singles, rows = [], []
    for q in questions:
        row = []
        for alt in q.alternatives:
            text = formatting.encoder_text("", q.stem, alt, FORMAT)[0]
            if text not in index:
                index[text] = len(singles)
                singles.append(dataclasses.replace(q, alternatives=[alt], spans=[], predictions=[]))
            row.append(index[text])
        rows.append(row)
    scored = inference.score(model, singles, None, [FORMAT], item_ids=[str(i) for i in range(len(singles))],
                             evidence=None, cancel=cancel)
    logit = {int(r.item_id): r.formats[FORMAT] for r in scored}
    temperature = model.card.temperature_for(FORMAT)
    out = []
    for row in rows:
        if not row or any(i not in logit for i in row):
            out.append(None)
            continue
        z = np.array([[logit[i].logits[0] for i in row]], dtype=np.float64)
        (p, pred, h, n_eff), = inference.scores_from_logits(z, temperature)
        out.append(inference.FormatScores(FORMAT, p, pred, h, n_eff, [float(x) for x in z[0]], temperature))
    return out


def explain(model, questions: Sequence, method: str = DEFAULT_METHOD, phrase: int = 1, scope: str = DEFAULT_SCOPE,
            together: int = DEFAULT_TOGETHER, progress: Callable[[int, int], None] | None = None,
            cancel: Callable[[], bool] | None = None) -> list[Explanation]:
    """An `Explanation` per question (in order) of the shortcut prediction.

    `method`: "delete" (the default) or "mask"; `phrase`: the longest unit in words; `scope`:
    "screened" (the default: content words alone, function words in groups first), "all" words
    alone or "content" words only; `together`: the size of the set searched for the words that
    take the most away together (0: none).  The stages are those of `inference.giveaway_search`:
    each is one scoring call for all the questions of a chunk.
    `progress(done, total)` counts questions; when `cancel()` turns true the questions
    finished so far are returned."""
    if method not in METHODS:
        raise ValueError(f"unknown occlusion method {method!r}; expected one of {', '.join(METHODS)}")
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")
    check_model(model)
    mask = mask_token(model.tokenizer) if method == MASK else None
    if method == MASK and mask is None:
        raise ModelError(f"the tokenizer of {model.id} has no mask token; use --method delete")
    results: list[Explanation] = []
    total = len(questions)
    start = 0
    while start < total:
        # as many questions as fill one call (at least one)
        chunk: list = []
        while start < total and (not chunk or sum(s.expected for s in chunk) < COPIES_PER_CALL):
            chunk.append(Search(questions[start], phrase, scope, together, method, mask))
            start += 1
        t0 = time.perf_counter()
        while True:
            asked = [(s, s.copies()) for s in chunk if not s.failed]
            copies = [c for _, cs in asked for c in cs]
            if not copies:
                break
            scores = shortcut_probabilities(model, copies, cancel)
            if cancel is not None and cancel():
                return results  # cancelled inside this chunk
            at = 0
            for s, cs in asked:
                s.take(scores[at:at + len(cs)])
                at += len(cs)
        seconds = (time.perf_counter() - t0) / max(1, len(chunk))
        for s in chunk:
            if s.failed:
                continue  # an item without alternatives: nothing to explain
            q, base = s.question, s.scores
            results.append(Explanation(
                item_id=q.id, model_id=model.id, model_name=model.card.name, method=method,
                probabilities=list(base.probabilities), predicted=base.predicted, n_eff=base.n_eff,
                fingerprint=fingerprint(q.stem, q.alternatives), words=s.attributions(),
                phrase=phrase, scope=scope, seconds=seconds, screened=s.screened,
                together_size=together if together > 1 else 0, together=s.together))
        if progress is not None:
            progress(len(results), total)
        if cancel is not None and cancel():
            break
    return results


def current(explanation: Explanation | None, question, model_id: str | None = None,
            variant_: str | None = None) -> bool:
    """Whether a stored explanation still describes `question` (same stem and alternatives)
    for this model and variant (`variant`)."""
    if explanation is None:
        return False
    if model_id is not None and explanation.model_id != model_id:
        return False
    if variant_ is not None and explanation.variant != variant_:
        return False
    return explanation.fingerprint == fingerprint(question.stem, question.alternatives)


__all__ = ["Attribution", "Explanation", "Unit", "explain", "units", "words", "occlude", "keep_only",
           "mask_token", "fingerprint", "shortcut_probabilities", "DEFAULT_METHOD", "METHODS", "MIN_EFFECT",
           "STEM", "current", "check_model", "variant", "SCOPES", "DEFAULT_SCOPE", "ALL", "CONTENT",
           "FUNCTION_WORDS", "SCREENED", "DEFAULT_TOGETHER", "WordSet"]
