"""The Kirsch–Mosenthal scale as EMBRACE's Appendix A defines it, on the released annotations."""
from __future__ import annotations

import itertools
import json
import statistics
from pathlib import Path

import pytest

from desktop.domain import difficulty as D
from desktop.formats import embrace_vocab as V

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "embrace"

# Appendix A, written out by EMBRACE's own labels (the seed's table, not our keys)
APPENDIX_A = {
    "tom": {"both LM": 0.5, "one LM, other SM": 1, "both SM": 1.5, "one LLTI, other LM": 2,
            "one LLTI, other SM": 2.5, "both LLTI": 3, "either is HLTI": 4, "GEN": 5},
    "pod": {"no": 1, "literal": 1.5, "synonymous": 2, "inference": 3, "one distractor": 4,
            "two or more\ndistractors": 5, "based on info\noutside the text": 5},
    "phr": {"1": 0, "2": 1, "3": 2, "4": 3},
    "items": {"1": 0, "2": 1, "3-4": 2, "5+": 3},
    "multip": {"Number of responses is specified": 0, "Number of responses is unspecified": 1},
    "req_p": {"1": 0, "1+": 1},
    "infer_c": {"1 paragraph or compare": 0, "1+ paragraphs or contrast": 1},
    "toc": {"addition (+)": 1, "subtraction (-)": 2, "multiplication (*)": 3, "division (/)": 4,
            "multiple operations": 5},
}
COMPLETE = ("toi", "tom", "pod", "phr", "items", "multip", "req_p", "infer_c")


def _difficulties():
    for colour in ("green", "yellow"):
        with open(DATA / f"embrace_{colour}.jsonl", encoding="utf-8") as fh:
            for line in fh:
                for q in json.loads(line)["test"]:
                    yield q["id"], q["annotations"]["difficulty"]


ITEMS = list(_difficulties())


def appendix_a_total(raw: dict) -> float:
    s = float(raw["toi"].split("||")[0])
    for field, table in APPENDIX_A.items():
        if field in raw:
            s += table[raw[field]]
    return s


def test_total_equals_appendix_a_arithmetic_for_every_item():
    checked = 0
    for item_id, raw in ITEMS:
        values = V.parse_difficulty(raw)
        if all(k in raw for k in COMPLETE):
            assert D.total(values) == appendix_a_total(raw), item_id
            checked += 1
        else:  # a few items lack a variable: no total, and the missing one is named
            assert D.total(values) is None
            assert D.missing(values)
    assert checked >= len(ITEMS) - 10


def test_theoretical_extremes_follow_from_the_categories():
    lo = sum(min(D.points(v, k) for k in D.categories(v)) for v in D.VARIABLES)
    hi = sum(max(D.points(v, k) for k in D.categories(v)) for v in D.VARIABLES)
    hi_no_toc = hi - max(D.points("toc", k) for k in D.categories("toc"))
    assert (lo, hi, hi_no_toc) == (D.THEORETICAL_MIN, D.THEORETICAL_MAX, D.THEORETICAL_MAX_WITHOUT_TOC)
    assert (lo, hi, hi_no_toc) == (2.5, 29, 24)  # section 5.2


def test_category_counts_of_the_modified_scale():
    # "the number of optional categories for TOM becomes eight ... for POD seven"
    assert len(D.categories("tom")) == 8 and len(D.categories("pod")) == 7
    # "5 categories with altogether 42 different concepts (4+8+16+11+5)" — Table 1 lists 44
    # names incl. "indeterminate"; the per-points counts are those of Table 1
    per = [sum(1 for p in D.TOI_CONCEPTS.values() if p == k) for k in (1, 2, 3, 4, 5)]
    assert per == [5, 8, 16, 11, 5]


def test_tom_table_3_is_symmetric_and_matches_the_combined_labels():
    table3 = {("lm", "lm"): 0.5, ("lm", "sm"): 1, ("sm", "sm"): 1.5, ("lm", "llti"): 2,
              ("sm", "llti"): 2.5, ("llti", "llti"): 3, ("lm", "hlti"): 4, ("sm", "hlti"): 4,
              ("llti", "hlti"): 4, ("gen", "gen"): 5}
    for (a, b), pts in table3.items():
        assert D.points("tom", [a, b]) == pts == D.points("tom", [b, a])
    for a, b in itertools.product(D.RELATIONS, repeat=2):
        assert D.points("tom", [a, b]) == D.points("tom", [b, a])
        assert (a, b) in D.tom_pairs(D.tom_combined((a, b)))
    assert D.tom_combined(("hlti", "hlti")) == "gen"  # HLTI on both relations = GEN


def test_toi_added_concepts_score_as_table_2_maps_them():
    assert D.points("toi", "age") == 2 and D.points("toi", "example") == 5
    assert D.points("toi", "attitude") == D.points("toi", "opinion") == 4
    with pytest.raises(ValueError, match="context-dependent"):
        D.points("toi", "job, profession, position")


def test_toi_from_alternative_types():
    assert D.toi_from_alternative_types(["place"] * 4) == "place"
    assert D.toi_from_alternative_types(["place", "time", "person", "reason"]) == "indeterminate"
    assert D.toi_from_alternative_types(["place", "place", "time", "time"]) == "indeterminate"
    with pytest.raises(ValueError, match="error of the item"):
        D.toi_from_alternative_types(["place", "place", "place", "time"])


def test_assessment_principles_as_messages():
    msgs = D.validate({"toi": "reason", "npar": "2+", "ic": "compare"}, toi_candidates=["action"])
    texts = " | ".join(m.text for m in msgs)
    assert "lowest-scoring" in texts and "IC" in texts and "not assessed" in texts
    assert any(m.variable == "tom" and m.level == "warning" for m in msgs)
    assert any("highest-scoring" in m.text for m in D.validate({"pod": "literal"}, pod_candidates=["inference"]))
    assert D.validate({"pod": "bogus"})[0].level == "error"


def test_npar_ic_tie_holds_in_the_released_data():
    for _, raw in ITEMS:
        values = V.parse_difficulty(raw)
        assert not [m for m in D.validate(values) if m.variable == "ic"]


def test_eligibility():
    assert D.eligibility("continuous", "content", "mild") == (True, "")
    assert D.eligibility("non-continuous", "content", None)[0] is False
    assert D.eligibility("continuous", "vocabulary", None)[0] is False
    assert D.eligibility("continuous", "structure", None)[0] is False
    assert D.eligibility("continuous", "content", "severe")[0] is False
    ok, why = D.eligibility("partly continuous", "content", "moderate")
    assert ok and "partly continuous" in why


def test_mean_is_about_one_point_below_the_seeds_13_09():
    totals = [D.total(V.parse_difficulty(raw)) for _, raw in ITEMS]
    totals = [t for t in totals if t is not None]
    mean = statistics.mean(totals)
    # The seed reports 13.09 over its 1,181 items; Appendix A arithmetic on the released
    # annotations gives about one point less (we report what we compute).
    assert 0.5 < 13.09 - mean < 1.5
    assert D.THEORETICAL_MIN <= min(totals) and max(totals) <= D.THEORETICAL_MAX_WITHOUT_TOC


def test_several_categories_keep_the_highest_except_toi():
    msgs = D.validate({"tom": ["lm", "lm"], "toi": "theme"},
                      candidates={"tom": [["lm", "sm"]], "toi": ["place"]})
    assert any(m.variable == "tom" and "highest-scoring" in m.text for m in msgs)
    assert any(m.variable == "toi" and "lowest-scoring" in m.text for m in msgs)
    assert not [m for m in D.validate({"tom": "sm_sm"}, candidates={"tom": ["lm_lm"]}) if m.variable == "tom"
                and m.level == "warning" and "categories apply" in m.text]
