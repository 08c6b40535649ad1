"""EMBRACE's strings <-> difficulty keys and problem tags, on the released annotations."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from desktop.domain import difficulty as D
from desktop.domain import typology as T
from desktop.domain.model import ProblemTag
from desktop.formats import embrace_vocab as V

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "embrace"


def _records():
    for colour in ("green", "yellow"):
        with open(DATA / f"embrace_{colour}.jsonl", encoding="utf-8") as fh:
            for line in fh:
                yield colour, json.loads(line)


RECORDS = list(_records())
QUESTIONS = [(c, r, q) for c, r in RECORDS for q in r["test"]]


def test_every_question_of_the_files_is_read():
    assert len(QUESTIONS) == 1165  # 200 green + 965 yellow, as shared/README.md counts


def test_every_raw_difficulty_string_parses_and_export_is_lossless():
    for _, _, q in QUESTIONS:
        raw = q["annotations"]["difficulty"]
        values = V.parse_difficulty(raw)
        assert V.unparse_difficulty(values, raw) is raw
        for var, key in values.items():
            D.points(var, key)  # every key is a category of the scale
        # TOI's points are written in the file before the concept: "4||reason"
        assert D.points("toi", values["toi"]) == float(raw["toi"].split("||")[0])


def test_changed_value_is_rewritten_in_embrace_strings_and_the_rest_kept():
    raw = QUESTIONS[0][2]["annotations"]["difficulty"]
    values = V.parse_difficulty(raw)
    edited = dict(values, tom=["sm", "llti"], npar="2+", ic="contrast", toc="division", toi="example")
    out = V.unparse_difficulty(edited, raw)
    assert out["tom"] == "one LLTI, other SM"
    assert out["req_p"] == "1+" and out["infer_c"] == "1+ paragraphs or contrast"
    assert out["toc"] == "division (/)"
    assert out["toi"] == "5||equivalent"  # Table 2: example -> equivalent, 5
    assert {k: v for k, v in out.items() if k not in ("tom", "req_p", "infer_c", "toc", "toi")} == \
        {k: v for k, v in raw.items() if k not in ("tom", "req_p", "infer_c", "toc", "toi")}
    assert V.parse_difficulty(out)["tom"] == "sm_llti"
    back = V.unparse_difficulty(dict(V.parse_difficulty(out), toc="none"), out)
    assert "toc" not in back
    assert raw == QUESTIONS[0][2]["annotations"]["difficulty"]  # the original is not touched


def test_unknown_difficulty_string_names_the_field():
    with pytest.raises(V.UnknownValue) as err:
        V.parse_difficulty({"tom": "both guesses"})
    assert err.value.field == "difficulty.tom"


def test_problem_tags_round_trip_for_every_question():
    for _, r, q in QUESTIONS:
        tags = V.problems_from_embrace(r["flags"], q)
        flags, upd = V.problems_to_embrace(tags, r["flags"], q)
        assert flags == r["flags"]
        assert upd["flags"] == q.get("flags")
        assert upd["problems"] == q["annotations"]["problems"]
        assert upd["other_problems"] == q["annotations"]["other_problems"]
        for t in tags:
            assert T.check(t.type, t.element) is None


def test_every_text_space_label_becomes_a_tag_on_the_text():
    for _, r, q in QUESTIONS:
        tags = V.problems_from_embrace(r["flags"], q)
        want = len((r["flags"] or {}).get("text_spaces", []))
        got = [t for t in tags if t.element == "text" and "spaces" in t.type]
        assert len(got) >= want


def test_free_text_that_names_no_type_stays_a_note():
    assert V.type_from_text("the text is a letter") == T.NOTE
    assert V.type_from_text("negation") == T.NOTE
    assert V.type_from_text("wrong punctuation (commas instead of periods).") == "punctuation_errors"
    assert V.type_from_text("case/capitalisation inconsistency") == "formatting_inconsistency"
    assert V.type_from_text("unnecessary punctuation or missing information.") == "punctuation_errors"


def test_removing_and_adding_tags_rewrites_only_those_values():
    colour, r, q = next((c, r, q) for c, r, q in QUESTIONS if len((r["flags"] or {}).get("text_spaces", [])) >= 2)
    tags = V.problems_from_embrace(r["flags"], q)
    first_space = next(t for t in tags if t.extra["embrace"]["field"] == "text_spaces")
    kept = [t for t in tags if t is not first_space]
    kept.append(ProblemTag(type="punctuation_errors", element="question", origin="human"))
    kept.append(ProblemTag(type="ocr_errors", element="text", origin="model"))  # a suggestion: not written
    flags, upd = V.problems_to_embrace(kept, copy.deepcopy(r["flags"]), q)
    assert flags["text_spaces"] == r["flags"]["text_spaces"][1:]
    assert upd["flags"]["question_punctuation"] == ["punctuation errors"]
    assert "ocr errors" not in json.dumps(flags)
    again = V.problems_from_embrace(flags, dict(q, flags=upd["flags"]))
    assert sorted(t.type for t in again if t.element == "question") == \
        sorted(t.type for t in kept if t.element == "question" and t.origin != "model")


def test_text_format_follows_problems_complex():
    counts = {"partly continuous": 0, "non-continuous": 0, "multiple": 0}
    for _, _, q in QUESTIONS:
        fmt = V.text_format_from_embrace(q)
        cx = (q["annotations"]["problems"]["complex"] or "").split("||")
        if "non-continuous text" in cx:
            assert fmt["text_format"] == "non-continuous"
            counts["non-continuous"] += 1
        elif {"elements of a non-continuous text", "instructory texts with lists"} & set(cx):
            assert fmt["text_format"] == "partly continuous"
        if "multiple texts" in cx:
            assert fmt["multiple_texts"] is True
            counts["multiple"] += 1
        assert fmt["unit_type"] == "content"
        assert V.text_format_to_embrace(fmt["text_format"], fmt["multiple_texts"], q) == \
            q["annotations"]["problems"]["complex"]
    assert counts["non-continuous"] > 0 and counts["multiple"] > 0


def test_text_format_edit_is_written_to_complex():
    q = next(q for _, _, q in QUESTIONS if q["annotations"]["problems"]["complex"] is None)
    assert V.text_format_to_embrace("partly continuous", True, q) == "elements of a non-continuous text||multiple texts"


def test_every_type_written_for_a_new_tag_reads_back_as_itself():
    q = QUESTIONS[0][2]
    for key, typ in T.TYPES.items():
        if key == T.NOTE:
            continue
        for element in typ.elements:
            tag = ProblemTag(type=key, element=element, origin="human")
            flags, upd = V.problems_to_embrace([tag], {}, q)
            back = V.problems_from_embrace(flags, dict(q, flags=upd["flags"], annotations=dict(
                q["annotations"], problems=upd["problems"], other_problems=upd["other_problems"])))
            assert [(t.type) for t in back] == [key], (key, element, flags, upd)


def test_table_4_names_map_to_their_types_not_to_lookalikes():
    assert V.type_from_text("Spelling errors (except hyphens and contractions)") == "spelling_errors"
    assert V.type_from_text("extra spaces (within a word or a digit)") == "extra_spaces_word"
    assert V.type_from_text("Inconsistency between T and A") == "inconsistency_t_a"


def test_other_spellings_of_the_same_categories_are_read():
    # files written by other versions of the tool: spacing, "4+", TOM as any pair, Table 2 concepts
    values = V.parse_difficulty({"toi": "3||job", "tom": "one SM, other LLTI", "pod": "two or more distractors",
                                 "phr": "4+", "items": "5+", "multip": "unspecified"})
    assert values == {"toi": "role", "tom": "sm_llti", "pod": "two_same_paragraph", "nphr": "4+", "ni": "5+",
                      "nit": "unspecified", "toc": "none"}
    assert V.parse_difficulty({"tom": "both HLTI"})["tom"] == "gen"  # HLTI on both relations is GEN
    assert D.points("toi", V.parse_difficulty({"toi": "2||age"})["toi"]) == 2


def test_bare_spelling_label_next_to_a_qualified_one_is_the_same_problem():
    tags = V.problems_from_embrace({"text_spelling": ["spelling errors", "spelling errors (hyphens, contractions)"]},
                                   {"annotations": {}})
    assert [t.type for t in tags] == ["spelling_hyphens_contractions"] * 2
    assert T.acceptability(tags) == T.PARTIALLY  # moderate, as the released data has it
    flags, _ = V.problems_to_embrace(tags, {"text_spelling": ["spelling errors", "spelling errors (hyphens, contractions)"]},
                                     {"annotations": {}})
    assert flags == {"text_spelling": ["spelling errors", "spelling errors (hyphens, contractions)"]}
