"""Evidence sentences for ExpMRC: the seed's two baselines and one better unsupervised method.

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

import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

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
    """The method's free choices; `models.evidence_cv` picks them by cross-validation."""

    beta: float = BETA  # F-beta of sentence against stem + alternative (> 1 leans to recall)
    short_sentence: int = SHORT_SENTENCE  # a sentence with fewer scored tokens takes a neighbour along
    reader_weight: float = READER_WEIGHT  # share of each alternative's vote given by the reader's probability
    idf: bool = True  # weight tokens by inverse sentence frequency (else all weigh 1)


DEFAULT_SETTINGS = Settings()


@dataclass(frozen=True)
class EvidenceChoice:
    start: int
    end: int
    text: str
    score: float
    method: str


class SentenceIndex:
    """Sentences and their scored tokens for a set of passages, with document frequencies."""

    def __init__(self, passages: Sequence[str]):
        from inference.evidence import sentences

        from desktop.domain.expmrc_metric import tokens

        self._tokens = tokens
        self.sentences: dict[str, list[tuple[int, int, list[str]]]] = {}
        df: Counter = Counter()
        for text in passages:
            if text in self.sentences:
                continue
            sents = [(a, b, tokens(text[a:b])) for a, b in sentences(text)]
            self.sentences[text] = sents
            for _, _, toks in sents:
                df.update(set(toks))
        self.n = sum(len(v) for v in self.sentences.values())
        self.df = df

    def idf(self, token: str) -> float:
        return math.log((self.n + 1) / (self.df.get(token, 0) + 0.5))

    def of(self, passage: str):
        if passage not in self.sentences:  # a passage not indexed up front: index it alone
            self.sentences[passage] = SentenceIndex([passage]).sentences[passage]
        return self.sentences[passage]

    def tokens(self, text: str) -> list[str]:
        return self._tokens(text)


def weighted_fbeta(sentence: list[str], clue: list[str], idf, beta: float = BETA) -> float:
    cs, cc = Counter(sentence), Counter(clue)
    same = sum(min(n, cc[t]) * idf(t) for t, n in cs.items() if t in cc)
    if same <= 0:
        return 0.0
    p = same / sum(idf(t) * n for t, n in cs.items())
    r = same / sum(idf(t) * n for t, n in cc.items())
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r)


def idf_recall_options(index: SentenceIndex, passage: str, stem: str, alternatives: Sequence[str],
                       probabilities: Sequence[float] | None,
                       settings: Settings = DEFAULT_SETTINGS) -> EvidenceChoice | None:
    sents = index.of(passage)
    if not sents:
        return None
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
            settings: Settings = DEFAULT_SETTINGS) -> EvidenceChoice | None:
    """The evidence for one question by the named method (`predicted` is the reader's answer)."""
    if method == IDF_RECALL:
        return idf_recall_options(index or SentenceIndex([passage]), passage, stem, alternatives, probabilities,
                                  settings)
    if method in (WITH_QUESTION, OPTION_ONLY):
        from inference.evidence import predict_evidence

        e = predict_evidence(passage, stem, list(alternatives), predicted, method)
        return None if e is None else EvidenceChoice(e.start, e.end, e.text, e.f1, method)
    raise ValueError(f"unknown evidence method {method!r}; expected one of {', '.join(METHODS)}")
