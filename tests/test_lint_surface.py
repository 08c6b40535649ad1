"""The surface linter on the issue's examples and on EMBRACE's released annotations."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from desktop.domain import surface_lint as L
from desktop.domain import surface_rules, surface_scan
from desktop.domain import typology as T
from desktop.domain.model import Question
from desktop.formats import read
from desktop.reports import lint_eval

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "embrace"
GREEN, YELLOW = read(DATA / "embrace_green.jsonl")[0], read(DATA / "embrace_yellow.jsonl")[0]


@pytest.mark.parametrize("text, found, typ", [
    ("He is a middle - aged man.", "middle - aged", "spelling_hyphens_contractions"),
    ("I don ' t know.", "don ' t", "spelling_hyphens_contractions"),
    ("I' m fine.", "I' m", "spelling_hyphens_contractions"),
    ("About 1, 000 people came.", "1, 000", "extra_spaces_punctuation"),
    ("the morning' s news", "morning' s", "spelling_hyphens_contractions"),
    ("prefix = st1 /The park opened.", "prefix = st1 /", "additional_notes"),
    ("A word (n.) here.", "(n.)", "additional_notes"),
    ("They left.(238 words)", "(238 words)", "additional_notes"),
    ("It was cool,because I won.", ",", "missing_spaces_punctuation"),
    ("near Silicon Valley.The company", ".", "missing_spaces_punctuation"),
    ("in the adventures . On many", " ", "extra_spaces_punctuation"),
    ("the rules were changed.,, and", ".,,", "punctuation_errors"),
    ("our different color1s, beliefs", "color1s", "ocr_errors"),
    ("I dont care.", "dont", "spelling_hyphens_contractions"),
])
def test_issue_examples_are_found_with_their_span(text, found, typ):
    tags = [t for t in L.detect_text(text) if t.type == typ]
    assert tags, (text, [t.type for t in L.detect_text(text)])
    assert text[tags[0].start:tags[0].end] == found
    assert tags[0].origin == "model" and tags[0].element == "text"


@pytest.mark.parametrize("text", [
    "a one- to two-week vacation", "a shop - a good one", "at 5 a.m. on a morning", "See http://www.icehotel.com now.",
    "In the 1950s and the 19th century", "On May 5, 2010, he came.", "It cost $1,000,000.", "Mr. Smith said so ...",
])
def test_ordinary_writing_is_left_alone(text):
    assert L.detect_text(text) == []


def test_alternatives_in_the_alternatives_text_and_their_formatting():
    q = Question(id="x", passage_id="p", index=0, stem="He was a _ man.",
                 alternatives=["middle - aged", "young", "old", "Tall."], key=0)
    tags = L.detect_item(q, "The man was tall and old.")
    spaced = [t for t in tags if t.type == "spelling_hyphens_contractions"]
    assert spaced and spaced[0].alternative == 0 and q.alternatives[0][spaced[0].start:spaced[0].end] == "middle - aged"
    fmt = {t.alternative for t in tags if t.type == "formatting_inconsistency"}
    assert 3 in fmt  # capitalised first word and a final period among lowercase bare ones


def test_spans_lie_inside_their_element():
    for ds in (GREEN, YELLOW):
        for p in ds.passages:
            for q in p.questions:
                for t in L.detect(q, p.text):
                    if t.start is None:
                        continue
                    s = p.text if t.element == "text" else q.stem if t.element == "question" else q.alternatives[t.alternative]
                    assert 0 <= t.start < t.end <= len(s), (q.id, t)


def _colour_with_suggestions(ds):
    out = Counter()
    for p in ds.passages:
        text_tags = L.detect_text(p.text)
        for q in p.questions:
            out[T.acceptability(q.problems + text_tags + L.detect_item(q, p.text), include_suggestions=True)] += 1
    return out


def test_suggestions_keep_the_file_colours_for_95_percent_of_items():
    green, yellow = _colour_with_suggestions(GREEN), _colour_with_suggestions(YELLOW)
    assert green[T.ACCEPTABLE] >= 0.95 * sum(green.values()), green
    assert yellow[T.MAINLY] >= 0.95 * sum(yellow.values()), yellow


def test_precision_and_recall_against_the_recorded_tags():
    scores = lint_eval.evaluate([GREEN, YELLOW])
    # extra spaces around punctuation: the most frequent recorded problem of the texts
    sp = scores["extra spaces"]
    assert sp.precision is not None and sp.precision >= 0.8 and sp.recall >= 0.5
    for s in scores.values():
        assert s.correct_units <= s.detected_units and s.found_units <= s.recorded_units


def test_missing_comma_before_a_final_according_to_in_the_stem():
    q = Question(id="x", passage_id="p", index=0, stem="Which is true according to the passage?",
                 alternatives=["a", "b", "c", "d"], key=0)
    tags = [t for t in L.detect_item(q) if t.type == "punctuation_errors"]
    assert tags and tags[0].element == "question" and q.stem[tags[0].start:tags[0].end] == " "
    q.stem = "According to the passage, which is true?"
    assert not [t for t in L.detect_item(q) if t.type == "punctuation_errors"]


def _strings(datasets):
    for ds in datasets:
        for p in ds.passages:
            yield p.text
            for q in p.questions:
                yield q.stem
                yield from q.alternatives


def test_the_fast_scan_finds_what_the_rules_define_on_real_texts():
    """`_found` tries each rule only where a trigger says a match can start; on every
    EMBRACE and ExpMRC string and RACE's dev/middle folder it must find exactly what the
    rules' plain `finditer` finds (`_found_reference`)."""
    root = DATA.parent
    datasets = [GREEN, YELLOW, *read(root / "expmrc" / "expmrc-race-dev.json"),
                *read(root / "race" / "dev" / "middle")]
    strings = list(dict.fromkeys(_strings(datasets)))
    assert len(strings) > 5000
    reference = [surface_rules.found_reference(s) for s in strings]
    assert [surface_scan.found.__wrapped__(s) for s in strings] == reference
    # the rules do fire there, every one of them, so the comparison compares something
    assert {typ for found in reference for typ, *_ in found} == {typ for typ, _, _ in surface_rules.RULES}
