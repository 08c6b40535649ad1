"""EMBRACE's problem strings <-> the domain's problem tags, and the text format those strings
also carry (`problems.complex`: "non-continuous text", "multiple texts", ...).

* `problems_from_embrace(text_flags, question_record) -> [ProblemTag]` /
  `problems_to_embrace(tags, text_flags, question_record) -> (text_flags, updates)`
  (also under the contract's names `parse_problems` / `unparse_problems`)
* `text_format_from_embrace(question_record) -> {text_format, multiple_texts, unit_type}` /
  `text_format_to_embrace(...)`
"""
from __future__ import annotations

import re
from typing import Any

from desktop.domain import typology as T
from desktop.domain.model import ProblemTag


# Exact labels of EMBRACE's annotation tool
LABELS = {
    "extra spaces (punctuation)": "extra_spaces_punctuation",
    "missing spaces (punctuation)": "missing_spaces_punctuation",
    "extra spaces": "extra_spaces",
    "missing spaces": "missing_spaces",
    "punctuation errors": "punctuation_errors",
    "formatting inconsistency": "formatting_inconsistency",
}
# Free text: the first pattern that matches names the type.  Specific before general,
# punctuation before gaps ("unclear punctuation - an extra gap / ...?" is about punctuation).
_PATTERNS: list[tuple[str, str]] = [
    (r"\bnegation\b", T.NOTE),  # a readability remark, not a problem (green items carry it)
    (r"additional notes?", "additional_notes"),
    (r"misleading spelling", "misleading_spelling"),
    (r"spelling errors? \(except", "spelling_errors"),
    (r"spelling[^.]*(hyphen|contraction)", "spelling_hyphens_contractions"),
    (r"extra spaces? \((within|in) ", "extra_spaces_word"),
    (r"missing spaces? \(between", "missing_spaces_words"),
    (r"inconsistency between (t|text) and (a\b|alternatives?)|inconsistency between (a|alternatives?) and (t|text)\b",
     "inconsistency_t_a"),
    (r"inconsistency between (t|text) and (q|question)|inconsistency between (q|question) and (t|text)\b",
     "inconsistency_q_t"),
    (r"inconsistency between (q|question) and (a\b|alternatives?)|inconsistency between (a|alternatives?) and "
     r"(q|question)\b", "inconsistency_q_a"),
    (r"misleading spaces", "misleading_spaces"),
    (r"(redundant|extra) spaces", "extra_spaces"),
    (r"(missing|missed) spaces?", "missing_spaces"),
    (r"inconsistency between (a\b|alternatives)", "inconsistency_between_alternatives"),
    (r"(punctuation|capitali[sz]ation|case|formatting)[^.]*inconsistency|inconsistency[^.]*formatting"
     r"|misleading formatting", "formatting_inconsistency"),
    (r"punctuation", "punctuation_errors"),
    (r"\bocr\b", "ocr_errors"),
    (r"grammatical error", "grammatical_errors"),
    (r"syntax error", "syntax_errors"),
    (r"spelling error", "spelling_errors"),
    (r"overlapping alternatives", "overlapping_alternatives"),
    (r"time[- ]dependent", "time_dependent"),
    (r"answerable without reading", "answerable_without_reading"),
    (r"subjective formulation", "subjective_formulation"),
    (r"ambiguous(ly)? formulat", "ambiguously_formulated"),
    (r"incomplete text", "incomplete_text"),
    (r"incomplete question", "incomplete_question"),
    (r"incomplete alternative", "incomplete_alternatives"),
    (r"misleading gap", "misleading_gaps"),
    (r"extra gap", "extra_gaps"),
]
_COMPILED = [(re.compile(p, re.I), t) for p, t in _PATTERNS]


_NAMES = {t.name.lower(): k for k, t in T.TYPES.items() if k != T.NOTE}


def type_from_text(text: str) -> str:
    """The typology type a free-text entry names, or "note" when it names none."""
    t = text.strip().lower()
    if t in LABELS:
        return LABELS[t]
    if t.rstrip(".") in _NAMES:
        return _NAMES[t.rstrip(".")]
    for rx, key in _COMPILED:
        if rx.search(t):
            return key
    return T.NOTE


# question flags field -> element
QUESTION_FLAG_ELEMENT = {"question": T.QUESTION, "alternatives": T.ALTERNATIVES}
# Parts of problems.complex / other_problems that describe the text's format, not a problem
FORMAT_PHRASES = {
    "elements of a non-continuous text": ("partly continuous", None),
    "instructory texts with lists": ("partly continuous", None),
    "non-continuous text": ("non-continuous", None),
    "multiple texts": (None, True),
}


def _as_list(v) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return list(v)


def _type_in_field(value: str, field: str) -> str:
    """A value that names no type still names one through its field ("text_spelling": ["hyphens"])."""
    key = type_from_text(value)
    if key != T.NOTE or value.strip().lower() == "negation":
        return key
    v, f = value.lower(), field.lower()
    if "spelling" in f:
        if re.search(r"hyphen|contraction", v):
            return "spelling_hyphens_contractions"
        return "misleading_spelling" if "misleading" in v else "spelling_errors"
    if "spaces" in f and re.search(r"\b(extra|redundant|missing|missed)\b", v):
        return "extra_spaces" if re.search(r"extra|redundant", v) else "missing_spaces"
    if "punctuation" in f:
        return "punctuation_errors"
    return key


def _tag(value: str, element: str, source: str, field: str, index: int) -> ProblemTag:
    key = _type_in_field(value, field)
    typ = T.TYPES[key]
    if element not in typ.elements:
        # e.g. a formatting inconsistency in other_problems is about the alternatives
        element = typ.elements[0] if key != T.NOTE else element
    return ProblemTag(type=key, element=element, note=value,
                      extra={"embrace": {"source": source, "field": field, "value": value, "index": index}})


def _split(v: str | None) -> list[str]:
    return [p for p in (v or "").split("||") if p]


_GENERIC_SPELLING = {"spelling errors", "spelling error", "spelling"}
_SPELLING_TYPES = ("spelling_hyphens_contractions", "spelling_errors", "misleading_spelling")


def _generic_like_sibling(tags: list[ProblemTag]) -> list[ProblemTag]:
    """EMBRACE's tool records a bare label next to its qualified variant ("extra spaces" with
    "extra spaces (punctuation)"); a bare "spelling errors" next to a qualified spelling
    label is that same problem, so it takes the sibling's type (and tier)."""
    qualified = [t.type for t in tags if t.type in _SPELLING_TYPES and t.note.strip().lower() not in _GENERIC_SPELLING]
    if qualified:
        for t in tags:
            if t.note.strip().lower() in _GENERIC_SPELLING:
                t.type = qualified[0]
    return tags


def problems_from_embrace(text_flags: dict | None, question_record: dict) -> list[ProblemTag]:
    """EMBRACE's problem annotations of one question -> problem tags.

    Text flags (the text record's `flags`) give element "text"; the question's own
    `flags` give question or alternatives; `annotations.problems.stem/choices` give
    question/alternatives; `other_problems` give what they name (inconsistencies of the
    alternatives' formatting -> alternatives).  Format phrases of `problems.complex` are
    not problems (see `text_format_from_embrace`); the rest of `complex` stays a note.
    Free text that names no type is a tag of type "note" with the text as written.
    """
    tags: list[ProblemTag] = []
    for field, values in (text_flags or {}).items():
        tags += _generic_like_sibling([_tag(v, T.TEXT, "flags", field, i) for i, v in enumerate(_as_list(values))])
    for field, values in (question_record.get("flags") or {}).items():
        element = QUESTION_FLAG_ELEMENT.get(field.split("_", 1)[0], T.QUESTION)
        tags += _generic_like_sibling([_tag(v, element, "question_flags", field, i)
                                       for i, v in enumerate(_as_list(values))])
    ann = question_record.get("annotations") or {}
    problems = ann.get("problems") or {}
    for field, element in (("stem", T.QUESTION), ("choices", T.ALTERNATIVES)):
        for i, v in enumerate(_split(problems.get(field))):
            tags.append(_tag(v, element, "problems", field, i))
    for i, v in enumerate(_split(problems.get("complex"))):
        if v.strip().rstrip(".").lower() not in FORMAT_PHRASES:
            tags.append(_tag(v, T.TEXT, "problems", "complex", i))
    for i, v in enumerate(_as_list(ann.get("other_problems"))):
        if v.strip().rstrip(".").lower() in FORMAT_PHRASES:
            continue
        # an inconsistency noted for the item is one between its alternatives (Appendix B:
        # capitalisation or final punctuation differing within one MCQ unit)
        element = T.ALTERNATIVES if type_from_text(v) == "formatting_inconsistency" else T.QUESTION
        tags.append(_tag(v, element, "other_problems", "other_problems", i))
    return tags


parse_problems = problems_from_embrace


def _new_place(tag: ProblemTag) -> tuple[str, str, str]:
    """(source, field, value) for a tag the annotator added."""
    value = tag.note if tag.type == T.NOTE else T.TYPES[tag.type].name.lower()
    for label, key in LABELS.items():
        if key == tag.type:
            value = label
    spaces = "spaces" in tag.type
    if tag.element == T.TEXT:
        return "flags", "text_spaces" if spaces else "text_other", value
    if tag.element == T.QUESTION:
        field = ("question_spaces" if spaces else
                 "question_punctuation" if tag.type == "punctuation_errors" else "question_other")
        return "question_flags", field, value
    if tag.element in (T.ALTERNATIVES, T.BETWEEN_ALTERNATIVES) and tag.type == "formatting_inconsistency":
        return "problems", "choices", value
    if tag.element in (T.ALTERNATIVES, T.BETWEEN_ALTERNATIVES):
        return "question_flags", "alternatives_spaces" if spaces else "alternatives_other", value
    return "other_problems", "other_problems", value  # combinations of elements


def problems_to_embrace(tags: list[ProblemTag], text_flags: dict | None,
                        question_record: dict) -> tuple[dict | None, dict]:
    """Problem tags -> (text flags, updates of the question record).

    `updates` has the keys "flags" (the question's own flags; None = absent),
    "problems" (the whole `annotations.problems` dict) and "other_problems" (list).
    Values read from EMBRACE keep their place and spelling; removed ones disappear;
    added ones are appended under the field EMBRACE's tool uses for them.  Suggestions
    (origin "model") are not written.
    """
    kept: dict[tuple[str, str], list[tuple[int, str]]] = {}
    added: dict[tuple[str, str], list[str]] = {}
    for tag in tags:
        if tag.origin == "model":
            continue
        src = (tag.extra or {}).get("embrace")
        if src:
            kept.setdefault((src["source"], src["field"]), []).append((src["index"], src["value"]))
        else:
            s, f, v = _new_place(tag)
            added.setdefault((s, f), []).append(v)

    def rebuild(source: str, original: dict | None, keep_empty_lists: bool) -> dict | None:
        out: dict[str, Any] = {}
        fields = list((original or {}).keys()) + [f for (s, f) in added if s == source]
        for field in dict.fromkeys(fields):
            orig = (original or {}).get(field)
            values = [v for _, v in sorted(kept.get((source, field), []))] + added.get((source, field), [])
            if isinstance(orig, str) and len(values) == 1:
                out[field] = values[0]
            elif values or (keep_empty_lists and orig is not None and not _as_list(orig)):
                out[field] = values
        if original is None and not out:
            return None
        return out

    new_text_flags = rebuild("flags", text_flags, True)
    qflags = rebuild("question_flags", question_record.get("flags"), True)
    ann = question_record.get("annotations") or {}
    old_problems = ann.get("problems") or {}
    new_problems = dict(old_problems)
    for field in ("stem", "choices", "complex"):
        values = [v for _, v in sorted(kept.get(("problems", field), []))] + added.get(("problems", field), [])
        if field == "complex":  # format phrases are not tags: keep them where they were
            fmt = [p for p in _split(old_problems.get("complex"))
                   if p.strip().rstrip(".").lower() in FORMAT_PHRASES]
            values = _merge_in_order(_split(old_problems.get("complex")), fmt + values)
        new_problems[field] = "||".join(values) if values else None
    if not old_problems and not any(new_problems.values()):
        new_problems = old_problems
    old_other = _as_list(ann.get("other_problems"))
    fmt_other = [v for v in old_other if v.strip().rstrip(".").lower() in FORMAT_PHRASES]
    other = [v for _, v in sorted(kept.get(("other_problems", "other_problems"), []))]
    other = _merge_in_order(old_other, fmt_other + other) + added.get(("other_problems", "other_problems"), [])
    return new_text_flags, {"flags": qflags, "problems": new_problems, "other_problems": other}


def _merge_in_order(original: list[str], keep: list[str]) -> list[str]:
    """The values of `keep` in their order in `original` (multiset-aware)."""
    pool = list(keep)
    out = []
    for v in original:
        if v in pool:
            pool.remove(v)
            out.append(v)
    return out + pool


unparse_problems = problems_to_embrace


# --- text format ---------------------------------------------------------------------------
def text_format_from_embrace(question_record: dict) -> dict:
    """Text format, single/multiple-member text and MCQ unit type of one question.

    From `problems.complex` (and the same phrases in `other_problems`): "elements of a
    non-continuous text" and "instructory texts with lists" -> partly continuous,
    "non-continuous text" -> non-continuous, "multiple texts" -> multiple-member.  EMBRACE
    released only content-based units on continuous or partly continuous texts, so the
    defaults are continuous, single-member, content.
    """
    ann = question_record.get("annotations") or {}
    parts = _split((ann.get("problems") or {}).get("complex")) + _as_list(ann.get("other_problems"))
    text_format, multiple = "continuous", False
    for p in parts:
        fmt, mult = FORMAT_PHRASES.get(p.strip().rstrip(".").lower(), (None, None))
        if fmt == "non-continuous" or (fmt and text_format == "continuous"):
            text_format = fmt
        if mult:
            multiple = True
    return {"text_format": text_format, "multiple_texts": multiple, "unit_type": "content"}


def text_format_to_embrace(text_format: str | None, multiple_texts: bool | None,
                           question_record: dict) -> str | None:
    """The `problems.complex` string for a (possibly edited) text format."""
    ann = question_record.get("annotations") or {}
    raw = (ann.get("problems") or {}).get("complex")
    now = text_format_from_embrace(question_record)
    if (text_format or "continuous", bool(multiple_texts)) == (now["text_format"], now["multiple_texts"]):
        return raw
    others = [p for p in _split(raw) if p.strip().rstrip(".").lower() not in FORMAT_PHRASES]
    parts = []
    if text_format == "partly continuous":
        parts.append("elements of a non-continuous text")
    elif text_format == "non-continuous":
        parts.append("non-continuous text")
    if multiple_texts:
        parts.append("multiple texts")
    parts += others
    return "||".join(parts) if parts else None
