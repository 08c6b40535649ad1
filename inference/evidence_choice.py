"""The model's evidence sentence: the ExpMRC seed's two baselines and one better unsupervised method.

`inference.score` calls `predict` for every question it scores in the standard format,
so `mcqlens score`, the window and `mcqlens expmrc predict` store and show the same
evidence.  The IDF of a token is counted over the sentences of the item's own passage
(`SentenceIndex([passage])`): an item's evidence then depends on nothing but the item
and the reader's probabilities, not on which other passages were scored in the same
call.  On ExpMRC RACE+ dev (out-of-fold answers of the MiniLM default) this costs 1.4
evidence F1 points against IDF over all 167 passages (49.8 against 51.2), still above
the seed's best baseline (48.0).

Baselines (ExpMRC seed, section 4.1; implemented in `inference.evidence`, reused here):

* ``most-similar-sentence``: the passage sentence with the highest token F1 against
  the predicted option;
* ``most-similar-sentence-with-question``: the same against question + predicted option.

Better method, ``idf-recall-options`` (this module):

1. IDF weights: a token that occurs in few sentences of the passages at hand says
   more about where the evidence is than "people" or "said" does.
2. Recall-leaning F-beta (β = 2) of the sentence against question + option: evidence
   references are longer than the average sentence (RACE+ dev: median 17 scored tokens
   against 11), and plain F1 prefers short sentences that repeat the stem.
3. Every alternative votes, weighted ½ by the reader's probability and ½ uniformly:
   a weak reader's wrong prediction no longer drags the evidence away from the
   question, and its right prediction still counts most.
4. A short sentence (< 10 scored tokens) takes its better-scoring neighbour along.

Sentences are split on . ! ? (and line breaks) as the seed describes.  No training,
no model beyond the reader's probabilities; pure Python + numpy.
"""
from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from desktop.domain.expmrc_metric import tokens
from inference.evidence import predict_evidence, sentences

OPTION_ONLY = "most-similar-sentence"
WITH_QUESTION = "most-similar-sentence-with-question"
IDF_RECALL = "idf-recall-options"
METHODS = (IDF_RECALL, WITH_QUESTION, OPTION_ONLY)
DEFAULT_METHOD = IDF_RECALL

BETA = 2.0
SHORT_SENTENCE = 10
READER_WEIGHT = 0.5


@dataclass(frozen=True)
class Settings:
    """The method's free choices; `models.evaluation.evidence_cv` picks them by cross-validation."""

    beta: float = BETA  # F-beta of sentence against stem + alternative (> 1 leans to recall)
    short_sentence: int = SHORT_SENTENCE  # a sentence with fewer scored tokens takes a neighbour along
    reader_weight: float = READER_WEIGHT  # share of each alternative's vote given by the reader's probability
    idf: bool = True  # weight tokens by inverse sentence frequency (else all weigh 1)
    # share of a sentence's score given by the reader itself: how much its predicted alternative's
    # logit drops when the sentence is taken out of the passage (`inference.evidence_occlusion`);
    # 0 = the similarity alone
    occlusion_weight: float = 0.0
    occlusion_top: int = 0  # re-score only the N most similar sentences (0: every sentence)
    # share of the score given by the reader's attention (a one-sequence model's
    # `inference.option_attention`): how much the predicted alternative's tokens attend to the
    # sentence in `attention_layers`, summed over its tokens ("sum") or averaged ("mean"); free:
    # it comes from the pass that gives the probabilities
    attention_weight: float = 0.0
    attention_layers: tuple[int, ...] = ()
    attention_pool: str = "sum"


# Chosen by 5-fold cross-validation inside ExpMRC RACE+ dev with the shipped MPNet reader (the
# setting four of the five folds chose; `python -m models.evaluation.evidence_cv`, docs/models.md): plain F1
# (β 1), short sentences take a neighbour, the alternatives voted by the reader's probabilities,
# and a quarter of the score from the reader's own drop without each of the 8 most similar sentences.
DEFAULT_SETTINGS = Settings(beta=1.0, short_sentence=10, reader_weight=1.0, idf=True, occlusion_weight=0.25,
                            occlusion_top=8)


@dataclass(frozen=True)
class EvidenceChoice:
    start: int
    end: int
    text: str
    score: float
    method: str


@lru_cache(maxsize=16384)
def _scored_tokens(text: str) -> tuple[str, ...]:
    """The scorer's tokens of one sentence or clue.  Cached because a passage is indexed once per
    question that asks about it (RACE: about four), twice when the attention is mixed in, and the
    word tokenizer is most of the cost of the evidence on a small reader; a tuple, so no caller
    can change what the next one reads."""
    return tuple(tokens(text))


class SentenceIndex:
    """Sentences and their scored tokens for a set of passages, with document frequencies."""

    def __init__(self, passages: Sequence[str]):
        self.sentences: dict[str, list[tuple[int, int, list[str]]]] = {}
        df: Counter = Counter()
        for text in passages:
            if text in self.sentences:
                continue
            sents = [(a, b, list(_scored_tokens(text[a:b]))) for a, b in sentences(text)]
            self.sentences[text] = sents
            for _, _, toks in sents:
                df.update(set(toks))
        self.n = sum(len(v) for v in self.sentences.values())
        self.df = df
        self._idf: dict[str, float] = {}

    def idf(self, token: str) -> float:
        # memoised: the F-beta of every sentence against every clue asks for the same few tokens
        # again and again (over a million calls for one ExpMRC file)
        got = self._idf.get(token)
        if got is None:
            got = self._idf[token] = math.log((self.n + 1) / (self.df.get(token, 0) + 0.5))
        return got

    def of(self, passage: str):
        if passage not in self.sentences:  # a passage not indexed up front: index it alone
            self.sentences[passage] = SentenceIndex([passage]).sentences[passage]
        return self.sentences[passage]

    def tokens(self, text: str) -> list[str]:
        return list(_scored_tokens(text))


def weighted_fbeta(sentence: list[str], clue: list[str], idf, beta: float = BETA) -> float:
    cs, cc = Counter(sentence), Counter(clue)
    same = sum(min(n, cc[t]) * idf(t) for t, n in cs.items() if t in cc)
    if same <= 0:
        return 0.0
    p = same / sum(idf(t) * n for t, n in cs.items())
    r = same / sum(idf(t) * n for t, n in cc.items())
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r)


def settings_for(card) -> Settings:
    """The evidence settings a model's card names (`evidence`: chosen for that model by
    `models.evaluation.evidence_cv`), else the default."""
    given = (getattr(card, "extra", None) or {}).get("evidence") if card is not None else None
    if not isinstance(given, dict):
        return DEFAULT_SETTINGS
    known = {k: v for k, v in given.items() if k in Settings.__dataclass_fields__}
    if "attention_layers" in known:
        known["attention_layers"] = tuple(int(x) for x in known["attention_layers"])
    return Settings(**known)


def sentence_attention(sents, offsets: Sequence[tuple[int, int]], weights: Sequence[float],
                       pool: str = "sum") -> list[float]:
    """Per sentence (start, end, ...) the attention of the tokens whose first character lies in it,
    summed or averaged; tokens past the reader's cut give nothing."""
    starts = [a for a, _ in offsets]
    out = []
    for a, b, *_ in sents:
        i, j = bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)
        part = weights[i:j]
        out.append(float(sum(part)) / (len(part) if pool == "mean" and part else 1.0) if part else 0.0)
    return out


def blend(similarity: Sequence[float], signals: Sequence[tuple[Sequence[float], float]]) -> list[float]:
    """Similarity and other per-sentence signals, each scaled to the passage's largest (negative
    values count as none), the similarity weighted 1 − the others' weights."""
    top_s = max(similarity, default=0.0) or 1.0
    rest = 1.0 - sum(w for _, w in signals)
    out = [rest * s / top_s for s in similarity]
    for values, w in signals:
        vals = [max(0.0, v) for v in values]
        top = max(vals, default=0.0) or 1.0
        out = [o + w * v / top for o, v in zip(out, vals)]
    return out


def similarity_scores(index: SentenceIndex, passage: str, stem: str, alternatives: Sequence[str],
                      probabilities: Sequence[float] | None, settings: Settings = DEFAULT_SETTINGS) -> list[float]:
    """Per sentence of `index.of(passage)`: its IDF-weighted F-beta against stem + each
    alternative, the alternatives' votes weighted by the reader's probabilities."""
    sents = index.of(passage)
    k = len(alternatives)
    probs = list(probabilities) if probabilities is not None else [1.0 / k] * k
    rw = settings.reader_weight
    weights = [rw * p + (1 - rw) / k for p in probs]
    stem_tokens = index.tokens(stem.replace("_", " "))
    idf = index.idf if settings.idf else (lambda _t: 1.0)
    scores = [0.0] * len(sents)
    for w, alt in zip(weights, alternatives):
        clue = stem_tokens + index.tokens(alt)
        for i, (_, _, toks) in enumerate(sents):
            scores[i] += w * weighted_fbeta(toks, clue, idf, settings.beta)
    return scores


def occlusion_candidates(scores: Sequence[float], settings: Settings = DEFAULT_SETTINGS) -> list[int]:
    """The sentences whose effect the reader is asked for: the `occlusion_top` most similar
    (all when 0); none when the settings do not mix effects in."""
    if settings.occlusion_weight <= 0:
        return []
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return sorted(order[: settings.occlusion_top] if settings.occlusion_top else order)


def idf_recall_options(index: SentenceIndex, passage: str, stem: str, alternatives: Sequence[str],
                       probabilities: Sequence[float] | None,
                       settings: Settings = DEFAULT_SETTINGS,
                       effects: dict[int, float] | None = None,
                       attention: Sequence[float] | None = None) -> EvidenceChoice | None:
    """`effects`: {sentence number in `index.of(passage)`: the reader's logit drop without it}
    for the `occlusion_candidates`; the other sentences count as no drop.  `attention`: per
    sentence, the reader's attention to it (`sentence_attention`)."""
    sents = index.of(passage)
    if not sents:
        return None
    scores = similarity_scores(index, passage, stem, alternatives, probabilities, settings)
    signals = []
    if effects and settings.occlusion_weight > 0:
        signals.append(([effects.get(i, 0.0) for i in range(len(sents))], settings.occlusion_weight))
    if attention is not None and settings.attention_weight > 0:
        signals.append((list(attention), settings.attention_weight))
    if signals:
        scores = blend(scores, signals)
    return choose_sentence(passage, sents, scores, settings)


def choose_sentence(passage: str, sents, scores: Sequence[float], settings: Settings = DEFAULT_SETTINGS) -> EvidenceChoice:
    """The best-scoring sentence; a short one (fewer scored tokens than `short_sentence`) takes its
    better-scoring neighbour along."""
    best = max(range(len(sents)), key=lambda i: (scores[i], -i))
    start, end, toks = sents[best]
    if len(toks) < settings.short_sentence:
        nbs = [j for j in (best - 1, best + 1) if 0 <= j < len(sents)]
        if nbs:
            j = max(nbs, key=lambda x: (scores[x], -x))
            start, end = min(start, sents[j][0]), max(end, sents[j][1])
    return EvidenceChoice(start, end, passage[start:end], scores[best], IDF_RECALL)


def predict(method: str, passage: str, stem: str, alternatives: Sequence[str], predicted: int,
            probabilities: Sequence[float] | None = None, index: SentenceIndex | None = None,
            settings: Settings = DEFAULT_SETTINGS, effects: dict[int, float] | None = None,
            attention: Sequence[float] | None = None) -> EvidenceChoice | None:
    """The evidence for one question by the named method (`predicted` is the reader's answer)."""
    if method == IDF_RECALL:
        return idf_recall_options(index or SentenceIndex([passage]), passage, stem, alternatives, probabilities,
                                  settings, effects, attention)
    if method in (WITH_QUESTION, OPTION_ONLY):
        e = predict_evidence(passage, stem, list(alternatives), predicted, method)
        return None if e is None else EvidenceChoice(e.start, e.end, e.text, e.f1, method)
    raise ValueError(f"unknown evidence method {method!r}; expected one of {', '.join(METHODS)}")
