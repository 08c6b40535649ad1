"""EMBRACE's error typology: types, tiers, elements, glossary, acceptability."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from desktop.domain import typology as T
from desktop.domain.model import ProblemTag
from desktop.formats import read

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "seeds" / "003_92c052271bc9824f.txt"
DATA = ROOT.parent / "shared" / "data" / "embrace"


def _glossary_terms() -> list[str]:
    text = SEED.read_text(encoding="utf-8")
    appendix = text[text.index("Appendix B Glossary of errors"):text.index("\nReferences")]
    terms = []
    for line in appendix.splitlines():
        m = re.match(r"^([A-Z][A-Za-z()/, -]+?) [–-] ", line)
        if m and not line.startswith("More examples"):
            terms.append(m.group(1).strip())
    return terms


def _norm(s: str) -> str:
    return re.sub(r"[^a-z]", "", s.lower().replace("gap(s)", "gaps").replace("alternative(s)", "alternatives"))


def test_every_appendix_b_term_is_a_type_with_its_definition():
    terms = _glossary_terms()
    assert len(terms) >= 25
    names = {_norm(t.name.replace("T and Q", "T and Q")): t for t in T.TYPES.values()}
    for term in terms:
        key = _norm(term)
        match = [t for n, t in names.items() if n == key or n.startswith(key) or key.startswith(n)]
        assert match, term
        assert len(T.glossary(match[0].key)) > 60


def test_tiers_follow_table_4_and_the_released_data():
    # moderate per ../shared/README.md; mild = spaces (punctuation), punctuation, formatting
    moderate = {k for k, t in T.TYPES.items() if t.tier == T.MODERATE}
    assert moderate == {"spelling_hyphens_contractions", "additional_notes", "inconsistency_between_alternatives"}
    mild = {k for k, t in T.TYPES.items() if t.tier == T.MILD}
    assert {"extra_spaces_punctuation", "missing_spaces_punctuation", "punctuation_errors",
            "formatting_inconsistency"} <= mild
    for severe in ("incomplete_text", "overlapping_alternatives", "ocr_errors", "answerable_without_reading",
                   "inconsistency_t_a", "inconsistency_q_t", "inconsistency_q_a", "extra_spaces_word"):
        assert T.tier(severe) == T.SEVERE
    assert T.tier(T.NOTE) is None


def test_elements_of_each_type():
    for t in T.TYPES.values():
        assert t.elements and set(t.elements) <= set(T.ELEMENTS)
    assert T.TYPES["incomplete_question"].elements == ("question",)
    assert T.TYPES["inconsistency_t_a"].elements == ("text-alternatives",)
    assert T.check("incomplete_text", "question") is not None
    assert T.check("punctuation_errors", "alternatives") is None
    assert [t.tier for t in T.types_for("question")][0] == T.SEVERE


def _tag(type_, element, origin="imported"):
    return ProblemTag(type=type_, element=element, origin=origin)


def test_acceptability_is_the_worst_tier_per_element_and_item():
    tags = [_tag("extra_spaces_punctuation", "text"), _tag("additional_notes", "question"),
            _tag("overlapping_alternatives", "alternatives", origin="model"), _tag("note", "question")]
    assert T.acceptability(tags, "text") == T.MAINLY
    assert T.acceptability(tags, "question") == T.PARTIALLY
    assert T.acceptability(tags, "alternatives") == T.ACCEPTABLE  # a suggestion does not count ...
    assert T.acceptability(tags, "alternatives", include_suggestions=True) == T.UNACCEPTABLE  # ... unless asked
    assert T.acceptability(tags) == T.PARTIALLY
    assert T.acceptability([]) == T.ACCEPTABLE
    assert T.acceptability([_tag("note", "text")]) == T.ACCEPTABLE


def test_recorded_tags_reproduce_the_file_colours():
    want = {"embrace_green.jsonl": T.ACCEPTABLE, "embrace_yellow.jsonl": T.MAINLY}
    for name, expected in want.items():
        (ds,) = read(DATA / name)
        got = Counter(T.acceptability(q.problems) for q in ds.questions())
        n = sum(got.values())
        assert got[expected] >= 0.95 * n, (name, got)
