"""The one place that turns (passage, stem, alternative, input format) into encoder text.

Training (`models/`), inference and the None-of-the-above transform all call this
module, so a model is always scored on text built exactly as it was trained on.

Input formats (World Knowledge seed, Figure 3 and Appendix A.5):

* ``standard``  C+Q+{O}: ``[CLS] passage [SEP] question option [SEP]``
* ``shortcut``  Q+{O}:   ``[CLS] question option [SEP]``
* ``options``   {O}:     ``[CLS] option [SEP]``
* ``options_context`` {O}+C: ``[CLS] passage [SEP] option [SEP]``

Question + option (None-of-the-above seed, section 3): a cloze stem (one containing
"_") takes the alternative in its gap; a proper question keeps question and option
apart (joined by a space inside one segment).  The NOTA alternative of a cloze item
replaces the whole question segment ("[passage, None of the answers are correct.]").

Truncation: only the passage is cut (its end first); question and option are kept
whole.  Only when question + option alone exceed the budget is the question cut from
its start, so the option always survives.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

STANDARD = "standard"
SHORTCUT = "shortcut"
OPTIONS = "options"
OPTIONS_CONTEXT = "options_context"
FORMATS = (STANDARD, SHORTCUT, OPTIONS, OPTIONS_CONTEXT)
# The seed's notation, for labels in reports and the workbench.
FORMAT_NOTATION = {STANDARD: "C+Q+{O}", SHORTCUT: "Q+{O}", OPTIONS: "{O}", OPTIONS_CONTEXT: "{O}+C"}
USES_PASSAGE = {STANDARD: True, SHORTCUT: False, OPTIONS: False, OPTIONS_CONTEXT: True}
USES_QUESTION = {STANDARD: True, SHORTCUT: True, OPTIONS: False, OPTIONS_CONTEXT: False}

TRUNCATION_RULE = "passage-first: the passage is cut at its end; question and option are kept whole"
CLOZE_RULE = ("a stem containing '_' is cloze: the alternative fills the longest gap, other gaps are "
              "blanked; a proper question is followed by the alternative; a NOTA alternative of a "
              "cloze stem replaces the question")

# Single underscores inside a word run stand for spaces in some RACE stems
# ("Which_of_the_following_is_TRUE?"); they are not gaps.
_JOINER = re.compile(r"(?<=[A-Za-z0-9’'])_(?=[A-Za-z0-9“\"])")
# A gap: underscores, possibly broken by spaces or dots typed inside it ("____ _._______").
_GAP = re.compile(r"_(?:[\s._]*_)?")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?）)”])")
_MULTI_SPLIT = re.compile(r"\s*(?:;|；|\.\.\.|…|/)\s*")


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown input format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return fmt


def is_cloze(stem: str) -> bool:
    """The NOTA seed's rule: every stem containing "_" is a cloze item."""
    return "_" in stem


def tidy(text: str) -> str:
    """One space between words and none before punctuation (the one-sequence layout tidies alike)."""
    text = _SPACES.sub(" ", text).strip()
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


def gaps(stem: str) -> list[tuple[int, int]]:
    """(start, end) of the gaps of a stem after word-joining underscores became spaces."""
    return [m.span() for m in _GAP.finditer(_JOINER.sub(" ", stem))]


def fill_gap(stem: str, alternative: str) -> str:
    """The stem with the alternative in its gap.

    The longest gap takes the alternative.  When there are several gaps of gap length
    (>= 2 underscores) and the alternative splits into as many parts on ';', '...',
    '/' (e.g. "the key; the door"), each gap takes its part.  Remaining gaps are blanked.
    A stem without a real gap (only joining underscores) gets the alternative appended.
    """
    text = _JOINER.sub(" ", stem)
    found = [m.span() for m in _GAP.finditer(text)]
    if not found:
        return tidy(f"{text} {alternative}")
    long_gaps = [g for g in found if text[g[0]:g[1]].count("_") >= 2]
    parts = [p for p in _MULTI_SPLIT.split(alternative.strip()) if p]
    fills: dict[tuple[int, int], str] = {}
    if len(long_gaps) > 1 and len(parts) == len(long_gaps):
        fills = dict(zip(long_gaps, parts))
    else:
        longest = max(found, key=lambda g: text[g[0]:g[1]].count("_"))
        fills = {longest: alternative.strip()}
    out, pos = [], 0
    for g in found:
        out.append(text[pos:g[0]])
        out.append(f" {fills[g]} " if g in fills else " ")
        pos = g[1]
    out.append(text[pos:])
    return tidy("".join(out))


def question_option(stem: str, alternative: str, nota: bool = False) -> str:
    """The question+option segment (Q+O) of the encoder input."""
    if is_cloze(stem):
        return tidy(alternative) if nota else fill_gap(stem, alternative)
    return " ".join(f"{stem} {alternative}".split())


def encoder_text(passage: str, stem: str, alternative: str, fmt: str,
                 nota: bool = False) -> tuple[str, str | None]:
    """(first segment, second segment or None) for one alternative in one format.

    The passage, when the format has it, is always the first segment: it is the one
    the truncation rule may cut.
    """
    check_format(fmt)
    if fmt == STANDARD:
        return passage, question_option(stem, alternative, nota)
    if fmt == SHORTCUT:
        return question_option(stem, alternative, nota), None
    if fmt == OPTIONS:
        return " ".join(alternative.split()), None
    return passage, " ".join(alternative.split())


def encoder_texts(passage: str, stem: str, alternatives: Sequence[str], fmt: str,
                  nota_index: int | None = None) -> list[tuple[str, str | None]]:
    """`encoder_text` for every alternative of one question."""
    return [encoder_text(passage, stem, alt, fmt, nota=(i == nota_index))
            for i, alt in enumerate(alternatives)]


# ----------------------------------------------------------------------------- tokens

@dataclass
class Encoded:
    """Token arrays shaped [batch, options, tokens] (int64), padded to the batch's longest.

    `option_mask[b, o]` is False for padding options (questions with fewer alternatives
    than the widest one in the batch); their scores must be masked before the softmax.
    `lengths[b, o]` is the real token count of each sequence.
    """

    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray
    option_mask: np.ndarray
    lengths: np.ndarray

    def feeds(self, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """The graph inputs by name; only those the graph declares when `names` is given."""
        all_ = {"input_ids": self.input_ids, "attention_mask": self.attention_mask,
                "token_type_ids": self.token_type_ids}
        return all_ if names is None else {n: all_[n] for n in names}


def prepare_tokenizer(tokenizer):
    """Switch off the tokenizer file's own padding and truncation: this module does both."""
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def load_tokenizer(path):
    from tokenizers import Tokenizer

    return prepare_tokenizer(Tokenizer.from_file(str(path)))


def tokenize_items(tokenizer, items: Sequence[Sequence[tuple[str, str | None]]],
                   max_length: int = 512) -> list[list[tuple[list[int], list[int]]]]:
    """Per question, per option: (token ids, token type ids) with special tokens.

    Applies the passage-first truncation rule.  Identical segments (the passage,
    repeated for every option) are tokenized once.
    """
    template = template_of(tokenizer)
    special_pair = tokenizer.num_special_tokens_to_add(True)
    special_single = tokenizer.num_special_tokens_to_add(False)
    texts: dict[str, int] = {}
    seconds: set[str] = set()  # cut from their start, so they are tokenized whole
    for opts in items:
        for first, second in opts:
            texts.setdefault(first, len(texts))
            if second is not None:
                texts.setdefault(second, len(texts))
                seconds.add(second)
    # A segment far longer than the budget (a 20 MB passage) is tokenized from a prefix
    # only: the rules below keep at most `max_length` of its leading tokens anyway.
    long = {t for t in texts if len(t) > PREFIX_CHARS_PER_TOKEN * max_length and t not in seconds}
    order = [t for t in texts if t not in long]
    ids_of = {t: e.ids for t, e in zip(order, tokenizer.encode_batch(order, add_special_tokens=False))}
    for t in long:
        ids_of[t] = leading_ids(tokenizer, t, max_length)
    seqs = []
    for opts in items:
        row = []
        for first, second in opts:
            if second is None:
                row.append(template.single(ids_of[first][: max(0, max_length - special_single)]))
                continue
            b_ids = ids_of[second]
            budget_b = max_length - special_pair
            if len(b_ids) > budget_b:  # question+option alone too long: cut the question's start
                b_ids = b_ids[len(b_ids) - budget_b:]
            a_ids = ids_of[first][: max(0, max_length - special_pair - len(b_ids))]
            row.append(template.pair(a_ids, b_ids))
        seqs.append(row)
    return seqs


PREFIX_CHARS_PER_TOKEN = 8  # a first guess of the characters that hold `n` tokens (RACE: ~4.5 per token)
_SPACE = re.compile(r"\s")


def leading_ids(tokenizer, text: str, n: int) -> list[int]:
    """At least the first `n` token ids of `text` (all of them when it has fewer), exactly
    as tokenizing the whole text gives them, from a prefix cut at a whitespace.

    Every tokenizer here (WordPiece, byte-level BPE, SentencePiece) splits words at
    whitespace first, so the tokens before a whitespace cut do not depend on what follows
    it; the prefix is doubled until it yields more than `n` tokens (the last word before the
    cut then lies beyond the first `n`)."""
    chars = PREFIX_CHARS_PER_TOKEN * max(n, 1)
    while chars < len(text):
        cut = max((m.start() for m in _SPACE.finditer(text, max(0, chars - 1000), chars)), default=-1)
        if cut > 0:
            ids = tokenizer.encode(text[:cut], add_special_tokens=False).ids
            if len(ids) > n:
                return ids[:n]
        chars *= 2
    return tokenizer.encode(text, add_special_tokens=False).ids


def pad(seqs: Sequence[Sequence[tuple[list[int], list[int]]]], pad_id: int = 0) -> Encoded:
    """[B, O, T] arrays padded to the longest sequence and the widest question."""
    if not seqs:
        raise ValueError("nothing to encode")
    n_opt = max(len(r) for r in seqs)
    width = max(len(ids) for r in seqs for ids, _ in r)
    shape = (len(seqs), n_opt, width)
    input_ids = np.full(shape, pad_id, dtype=np.int64)
    attention = np.zeros(shape, dtype=np.int64)
    types = np.zeros(shape, dtype=np.int64)
    option_mask = np.zeros(shape[:2], dtype=bool)
    lengths = np.zeros(shape[:2], dtype=np.int64)
    for b, row in enumerate(seqs):
        for o in range(n_opt):
            # a padding option repeats the first one; option_mask hides its score
            ids, tids = row[o] if o < len(row) else row[0]
            n = len(ids)
            input_ids[b, o, :n] = ids
            types[b, o, :n] = tids
            attention[b, o, :n] = 1
            lengths[b, o] = n
            option_mask[b, o] = o < len(row)
    return Encoded(input_ids, attention, types, option_mask, lengths)


def encode_pairs(tokenizer, items: Sequence[Sequence[tuple[str, str | None]]],
                 max_length: int = 512) -> Encoded:
    """Tokenize per-question lists of (first, second) segments into [B, O, T] arrays."""
    if not items:
        raise ValueError("nothing to encode")
    return pad(tokenize_items(tokenizer, items, max_length), pad_id_of(tokenizer))


def pad_id_of(tokenizer) -> int:
    pad = tokenizer.token_to_id("[PAD]")
    if pad is None:
        pad = tokenizer.token_to_id("<pad>")
    return int(pad or 0)


class _Template:
    """Where a tokenizer puts its special tokens around one segment or a pair.

    Learned once from the tokenizer's own post-processor on one-token placeholders, so
    BERT ([CLS] a [SEP] b [SEP]) and RoBERTa (<s> a </s></s> b </s>) both work while the
    truncation stays ours.
    """

    def __init__(self, tokenizer):
        a = tokenizer.encode("a", add_special_tokens=False)
        b = tokenizer.encode("b", add_special_tokens=False)
        if len(a.ids) != 1 or len(b.ids) != 1:
            raise ValueError("tokenizer splits a one-letter placeholder; cannot learn its template")
        single = tokenizer.post_process(a, None, add_special_tokens=True)
        pair = tokenizer.post_process(a, b, add_special_tokens=True)
        i = single.ids.index(a.ids[0])
        self.s_pre, self.s_post = single.ids[:i], single.ids[i + 1:]
        self.s_types = single.type_ids
        ia = pair.ids.index(a.ids[0])
        ib = ia + 1 + pair.ids[ia + 1:].index(b.ids[0])
        self.p_pre, self.p_mid, self.p_post = pair.ids[:ia], pair.ids[ia + 1:ib], pair.ids[ib + 1:]
        t = pair.type_ids
        self.t_a, self.t_b = t[ia], t[ib]
        self.t_pre, self.t_mid, self.t_post = t[:ia], t[ia + 1:ib], t[ib + 1:]
        self.ts_a = single.type_ids[i]
        self.ts_pre, self.ts_post = single.type_ids[:i], single.type_ids[i + 1:]

    def single(self, a_ids):
        ids = self.s_pre + list(a_ids) + self.s_post
        types = self.ts_pre + [self.ts_a] * len(a_ids) + self.ts_post
        return ids, types

    def pair(self, a_ids, b_ids):
        ids = self.p_pre + list(a_ids) + self.p_mid + list(b_ids) + self.p_post
        types = (self.t_pre + [self.t_a] * len(a_ids) + self.t_mid + [self.t_b] * len(b_ids)
                 + self.t_post)
        return ids, types


_TEMPLATES: dict[int, tuple[object, _Template]] = {}


def template_of(tokenizer) -> _Template:
    """The tokenizer's pair template, worked out once per tokenizer."""
    key = id(tokenizer)
    hit = _TEMPLATES.get(key)
    if hit is None or hit[0] is not tokenizer:
        hit = (tokenizer, _Template(tokenizer))
        _TEMPLATES[key] = hit
    return hit[1]


def encode_questions(tokenizer, questions: Sequence[tuple[str, str, Sequence[str]]], fmt: str,
                     max_length: int = 512, nota_indices: Sequence[int | None] | None = None) -> Encoded:
    """Tokenize (passage, stem, alternatives) triples in one input format."""
    nota_indices = nota_indices or [None] * len(questions)
    items = [encoder_texts(p, s, alts, fmt, nota_index=n) for (p, s, alts), n in zip(questions, nota_indices)]
    return encode_pairs(tokenizer, items, max_length=max_length)
