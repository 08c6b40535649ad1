"""The one-sequence layout: a question's passage, stem and every alternative in one encoder input.

The per-alternative layout (`inference.formatting`) encodes each alternative in a sequence of
its own, the passage repeated four times.  Here the passage and the stem are read once and the
alternatives follow one another; each alternative's score is pooled from its own tokens (and
the separator after it), so one encoder pass scores all of them — about 3.5 times fewer tokens
for a RACE question in the standard format.  Training (`models.training.distill`) and the runtime
(`inference.scoring`) both call `encode`, so a model is scored on exactly the input it learnt.

    standard  C+Q+{O}:  <s> passage </s></s> stem </s> A </s> B </s> C </s> D </s>
    shortcut  Q+{O}:    <s> stem </s> A </s> B </s> C </s> D </s>

(BERT-style tokenizers: [CLS] passage [SEP] stem [SEP] A [SEP] ...; the separators come from
the tokenizer's own template, `inference.formatting._Template`.)

`option_ids` numbers the tokens: 0 for the passage, the stem and the special tokens, k + 1 for
the tokens of alternative k and the separator that ends it (so an empty alternative still has
a token to pool).  A cloze stem keeps its gap: the alternatives are read after it, as a reader
reads the printed item.

Truncation (the passage-first rule of the per-alternative layout): the passage is cut at its
end; the stem and the alternatives are kept whole.  Only when they alone exceed the budget is
each alternative cut to `ALTERNATIVE_CAP` tokens, then the stem cut from its start.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from inference.formatting import (PREFIX_CHARS_PER_TOKEN, SHORTCUT, STANDARD, template_of, tidy, check_format,
                                  leading_ids, pad_id_of)

LAYOUT = "one-sequence"
PER_ALTERNATIVE = "per-alternative"
LAYOUTS = (PER_ALTERNATIVE, LAYOUT)
FORMATS = (STANDARD, SHORTCUT)
ALTERNATIVE_CAP = 64  # tokens an alternative keeps when stem + alternatives overflow the budget
NOTA_TEXT = "None of the answers are correct."

# single underscores inside a word run stand for spaces in some RACE stems (formatting._JOINER)
_JOINER = re.compile(r"(?<=[A-Za-z0-9’'])_(?=[A-Za-z0-9“\"])")


def stem_text(stem: str) -> str:
    """The stem as the encoder reads it: word-joining underscores as spaces, gaps kept."""
    return tidy(_JOINER.sub(" ", stem))


@dataclass
class Sequence1:
    """One question's token ids; `passage_span` = (start, end) of the passage's tokens in `ids`;
    `passage_offsets` (when asked for) the (start, end) characters of each of those tokens."""

    ids: list[int]
    option_ids: list[int]
    passage_span: tuple[int, int]
    options: int
    passage_offsets: list | None = None

    def cut_to(self, max_length: int) -> "Sequence1":
        """The same question within `max_length` tokens, the passage cut at its end (the training
        data are encoded once at the longest length and cut per batch)."""
        over = len(self.ids) - max_length
        if over <= 0:
            return self
        a, b = self.passage_span
        keep = max(a, b - over)
        if len(self.ids) - (b - keep) > max_length:  # stem and alternatives alone overflow: as encoded
            return self
        return Sequence1(self.ids[:keep] + self.ids[b:], self.option_ids[:keep] + self.option_ids[b:], (a, keep),
                         self.options)


def tokenize(tokenizer, questions: Sequence[tuple[str, str, Sequence[str]]], fmt: str,
             max_length: int = 512, offsets: bool = False) -> list[Sequence1]:
    """One `Sequence1` per (passage, stem, alternatives) in the format (standard or shortcut);
    with `offsets`, the passage tokens' character spans too (where the reader's attention falls)."""
    check_format(fmt)
    if fmt not in FORMATS:
        raise ValueError(f"the one-sequence layout serves {', '.join(FORMATS)}, not {fmt}")
    tpl = template_of(tokenizer)
    texts: dict[str, int] = {}
    for passage, stem, alts in questions:
        if fmt == STANDARD:
            texts.setdefault(passage, 0)
        texts.setdefault(stem_text(stem), 0)
        for a in alts:
            texts.setdefault(" ".join(a.split()), 0)
    long = {t for t in texts if len(t) > PREFIX_CHARS_PER_TOKEN * max_length}
    order = [t for t in texts if t not in long]
    encodings = tokenizer.encode_batch(order, add_special_tokens=False)
    ids_of = {t: e.ids for t, e in zip(order, encodings)}
    offsets_of = {t: e.offsets for t, e in zip(order, encodings)} if offsets else {}
    for t in long:
        ids_of[t] = leading_ids(tokenizer, t, max_length)
        if offsets:  # the prefix's own offsets: its first tokens are the text's
            cut = tokenizer.encode(t[: PREFIX_CHARS_PER_TOKEN * 4 * max_length], add_special_tokens=False)
            offsets_of[t] = cut.offsets
    out = []
    for passage, stem, alts in questions:
        stem_ids = ids_of[stem_text(stem)]
        alt_ids = [ids_of[" ".join(a.split())] for a in alts]
        seq = _assemble(tpl, ids_of[passage] if fmt == STANDARD else None, stem_ids, alt_ids, max_length)
        if offsets and fmt == STANDARD:
            a, b = seq.passage_span
            seq.passage_offsets = list(offsets_of[passage][: b - a])
        out.append(seq)
    return out


def _assemble(tpl, passage_ids, stem_ids, alt_ids, max_length) -> Sequence1:
    sep = tpl.s_post  # what ends a single segment: </s> or [SEP]
    if passage_ids is None:
        head, mid, tail = tpl.s_pre, [], tpl.s_post
    else:
        head, mid, tail = tpl.p_pre, tpl.p_mid, tpl.p_post
    fixed = len(head) + len(mid) + len(tail) + len(sep) * len(alt_ids)
    need = fixed + len(stem_ids) + sum(len(a) for a in alt_ids)
    if need > max_length:  # the passage can go entirely; beyond that, cap the alternatives, then the stem
        over = need - max_length
        if alt_ids and over > 0:
            alt_ids = [a[:ALTERNATIVE_CAP] for a in alt_ids]
        room = max_length - fixed - sum(len(a) for a in alt_ids)
        if len(stem_ids) > max(room, 0):
            stem_ids = stem_ids[len(stem_ids) - max(room, 0):]
    budget = max_length - fixed - len(stem_ids) - sum(len(a) for a in alt_ids)
    ids: list[int] = list(head)
    p0 = len(ids)
    if passage_ids is not None:
        ids += passage_ids[: max(0, budget)]
        p1 = len(ids)
        ids += mid
    else:
        p1 = p0
    ids += stem_ids
    ids += tail
    option_ids = [0] * len(ids)
    for k, a in enumerate(alt_ids):
        ids += list(a) + list(sep)
        option_ids += [k + 1] * (len(a) + len(sep))
    return Sequence1(ids, option_ids, (p0, p1), len(alt_ids))


@dataclass
class Batch:
    """[B, T] arrays padded to the longest sequence; `option_mask` [B, K] is False for a question's
    missing alternatives (a 3-alternative question beside a 4-alternative one)."""

    input_ids: np.ndarray
    attention_mask: np.ndarray
    option_ids: np.ndarray
    option_mask: np.ndarray
    lengths: np.ndarray

    def feeds(self, names: Sequence[str]) -> dict[str, np.ndarray]:
        all_ = {"input_ids": self.input_ids, "attention_mask": self.attention_mask, "option_ids": self.option_ids}
        return {n: all_[n] for n in names}


def pad(seqs: Sequence[Sequence1], pad_id: int) -> Batch:
    if not seqs:
        raise ValueError("nothing to encode")
    width = max(len(s.ids) for s in seqs)
    k = max(s.options for s in seqs)
    ids = np.full((len(seqs), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(seqs), width), dtype=np.int64)
    opt = np.zeros((len(seqs), width), dtype=np.int64)
    omask = np.zeros((len(seqs), max(k, 1)), dtype=bool)
    lengths = np.zeros(len(seqs), dtype=np.int64)
    for b, s in enumerate(seqs):
        n = len(s.ids)
        ids[b, :n], mask[b, :n], opt[b, :n], lengths[b] = s.ids, 1, s.option_ids, n
        omask[b, : s.options] = True
    return Batch(ids, mask, opt, omask, lengths)


def encode(tokenizer, questions: Sequence[tuple[str, str, Sequence[str]]], fmt: str, max_length: int = 512) -> Batch:
    """`tokenize` and `pad` in one call."""
    return pad(tokenize(tokenizer, questions, fmt, max_length), pad_id_of(tokenizer))
