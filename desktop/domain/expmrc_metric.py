"""ExpMRC's scoring rules for multiple-choice data (Cui et al., the ExpMRC seed).

Follows the official scorer (`eval_expmrc.py`) rule for rule, including its quirks,
so that numbers are comparable with the published ones:

* Text is segmented character by character: CJK characters and the scorer's special
  characters (``-``, ``:``, ``_``, ``/``, …) are tokens of their own; the stretches
  between them go through NLTK's word tokenizer.  The official scorer calls
  ``nltk.word_tokenize``, which needs the punkt model; it cannot be downloaded here,
  so sentences are split on ``[.!?]`` followed by whitespace and each sentence goes
  through ``NLTKWordTokenizer`` (what ``word_tokenize`` does after punkt).
* Normalisation drops the tokens ``a``, ``an``, ``the`` *before* lower-casing (so a
  capitalised "The" survives, as in the official scorer) and every single-character
  punctuation token, then lower-cases.
* Evidence F1 is the token F1 against each reference, maximum over the references;
  when either side is empty, 1 if both are, else 0.
* Per question, overall = answer (0/1) × evidence F1; all three are averaged over
  every question of the dataset (a skipped question counts as 0) and reported in
  percent with three decimals.
"""
from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from typing import Iterable, Mapping

# The official scorer's list of characters that always stand alone.
SPECIAL_CHARS = [
    "-", ":", "_", "*", "^", "/", "\\", "~", "`", "+", "=", "，", "。", "：", "？", "！",
    "“", "”", "；", "’", "《", "》", "……", "·", "、", "「", "」", "（", "）", "－", "～", "『", "』",
]
_SPECIAL = set(SPECIAL_CHARS)
_DROPPED = set(string.punctuation + "".join(SPECIAL_CHARS))
_CJK = re.compile(r"[\u4e00-\u9fa5]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@lru_cache(maxsize=1)
def _word_tokenizer():
    # Imported lazily: nltk is only needed when something is scored.
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """NLTK-style word tokens without the punkt model (see the module docstring)."""
    tok = _word_tokenizer()
    out: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if sentence:
            out.extend(tok.tokenize(sentence))
    return out


def segment(text: str) -> list[str]:
    """The official mixed segmentation: special and CJK characters alone, the rest word-tokenized."""
    text = str(text).strip()
    tokens: list[str] = []
    pending = ""
    for ch in text:
        if ch in _SPECIAL or _CJK.match(ch):
            if pending:
                tokens.extend(word_tokenize(pending))
                pending = ""
            tokens.append(ch)
        else:
            pending += ch
    if pending:
        tokens.extend(word_tokenize(pending))
    return tokens


def normalize(tokens: Iterable[str]) -> list[str]:
    """Drop a/an/the and punctuation tokens, lower-case the rest (official order)."""
    return [t.lower() for t in tokens if t not in ("a", "an", "the") and t not in _DROPPED]


def tokens(text: str) -> list[str]:
    """Normalised tokens of a text, as the scorer compares them."""
    return normalize(segment(text))


def token_f1(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    """Token-overlap F1 between two normalised token lists."""
    if not prediction_tokens or not reference_tokens:
        return float(prediction_tokens == reference_tokens)
    same = sum((Counter(prediction_tokens) & Counter(reference_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(prediction_tokens)
    recall = same / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def evidence_f1(prediction: str, references: Iterable[str]) -> float:
    """Evidence F1 in 0..1: the best token F1 of the prediction against any reference."""
    pred = tokens(prediction)
    scores = [token_f1(pred, tokens(ref)) for ref in references]
    # The official scorer takes max() of an empty list and crashes; no reference scores 0.
    return max(scores) if scores else 0.0


def score_multiple_choice(
    dataset: Mapping, predictions: Mapping[str, Mapping[str, str]]
) -> dict:
    """Score an ExpMRC multiple-choice prediction file against the dataset document.

    `dataset` is the parsed ExpMRC JSON ({"version", "data": [...]}); `predictions`
    maps "<pid>-<j>" to {"answer": "C", "evidence": "..."}.  Returns ALL_F1, ANS_F1,
    EVI_F1 (strings with three decimals, in percent), TOTAL and SKIP, as the official
    scorer prints them.
    """
    answer_sum = evidence_sum = all_sum = 0.0
    total = skipped = 0
    for sample in dataset["data"]:
        answers = sample["answers"]
        evidences = sample.get("evidences")
        total += len(sample["questions"])
        for j, answer in enumerate(answers):
            qid = f"{sample['id']}-{j}"
            pred = predictions.get(qid)
            if pred is None:
                skipped += 1
                continue
            answer_score = 1.0 if pred.get("answer") == answer else 0.0
            ev_score = evidence_f1(str(pred.get("evidence", "")), evidences[j]) if evidences else 0.0
            answer_sum += answer_score
            evidence_sum += ev_score
            all_sum += answer_score * ev_score
    denom = total or 1
    return {
        "ALL_F1": f"{100.0 * all_sum / denom:.3f}",
        "ANS_F1": f"{100.0 * answer_sum / denom:.3f}",
        "EVI_F1": f"{100.0 * evidence_sum / denom:.3f}",
        "TOTAL": total,
        "SKIP": skipped,
    }
