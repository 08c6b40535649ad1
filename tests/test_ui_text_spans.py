"""Word snapping and span steps on real EMBRACE passages: every imported basis is already
word-aligned, so snapping must leave it as it is (up to the white space the file includes)."""
from __future__ import annotations

import json
from pathlib import Path

from desktop.ui.item.text_spans import (
    OffsetMap, next_word_end, next_word_start, paragraph_bounds, previous_word_end, previous_word_start,
    snap_to_words,
)

GREEN = Path(__file__).resolve().parents[2] / "shared" / "data" / "embrace" / "embrace_green.jsonl"


def _bases():
    with open(GREEN, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            for q in rec["test"]:
                for b in (q["annotations"].get("bases") or {}).values():
                    if b:
                        yield rec["text"], b["start"], b["end"]


def test_snapping_keeps_every_file_basis_and_repairs_cut_words():
    n = kept = 0
    for text, start, end in _bases():
        s, e = snap_to_words(text, start, end)
        core = text[start:end].strip()
        cs = start + (len(text[start:end]) - len(text[start:end].lstrip()))
        ce = cs + len(core)
        # snapping trims white space and only completes words cut by the marker (never adds a space)
        assert s <= cs and e >= ce, (start, end)
        assert not any(ch.isspace() for ch in text[s:cs] + text[ce:e]), (start, end)
        kept += (s, e) == (cs, ce)
        inner_s, inner_e = s + 2, e - 2
        if inner_e > inner_s and text[s:s + 3].isalpha() and text[e - 3:e].isalpha():
            assert snap_to_words(text, inner_s, inner_e) == (s, e)
        n += 1
    assert n  # the file has bases
    assert kept / n > 0.95  # nearly every basis in the file is already word-aligned


def test_word_steps_and_paragraphs():
    text = "It's a well-known fact.\nSecond line here."
    assert snap_to_words(text, 1, 9) == (0, 17)  # "It's a well-known"
    assert next_word_end(text, 4) == 6  # "It's| a" -> "It's a|"
    assert next_word_end(text, 17) == 23  # takes in "fact."
    assert previous_word_end(text, 23, 0) == 17
    assert next_word_start(text, 0) == 5
    assert previous_word_start(text, 5) == 0
    assert paragraph_bounds(text, 3, 5) == (0, 23)
    assert paragraph_bounds(text, 25, 26) == (24, len(text))


def test_offsets_for_qt_count_astral_characters_twice():
    text = "smile 😀 please"
    m = OffsetMap(text)
    i = text.index("please")
    assert m.to_qt(i) == i + 1
    assert m.to_py(m.to_qt(i)) == i
    assert OffsetMap("plain").to_qt(3) == 3
