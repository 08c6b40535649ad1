"""EMBRACE's annotation strings <-> the domain's difficulty keys and problem tags.

The EMBRACE reader and writer call these; nothing else here reads or writes files.
Raw values that the domain does not model survive in `extra` so that a writer gets
back exactly what was read when nothing was edited:

* `parse_difficulty(raw) -> values` / `unparse_difficulty(values, raw) -> raw`
* the problem tags and text format: `desktop.formats.embrace_problems` (its functions are
  importable from here too: `problems_from_embrace`, `problems_to_embrace`, `parse_problems`,
  `unparse_problems`, `type_from_text`, `text_format_from_embrace`, `text_format_to_embrace`)

Unknown strings raise `UnknownValue` (a ValueError naming the raw field), which the
reader turns into an InputError with the file and record.
"""
from __future__ import annotations

import re
from typing import Any

from desktop.domain import difficulty as D
from desktop.domain import values

# the problem strings' half of the vocabulary, named here for the reader, the writer and the tests
from .embrace_problems import (LABELS, parse_problems, problems_from_embrace, problems_to_embrace,  # noqa: F401
                               text_format_from_embrace, text_format_to_embrace, type_from_text,
                               unparse_problems)


class UnknownValue(ValueError):
    def __init__(self, field: str, value: Any, known):
        self.field, self.value = field, value
        super().__init__(f"unknown value {value!r} for {field} (known: {', '.join(map(repr, known))})")


# --- difficulty -----------------------------------------------------------------------
# raw field -> (variable, {raw string: category key})
TOM = {"both LM": "lm_lm", "one LM, other SM": "lm_sm", "both SM": "sm_sm",
       "one LLTI, other LM": "lm_llti", "one LLTI, other SM": "sm_llti", "both LLTI": "llti_llti",
       "either is HLTI": "hlti", "GEN": "gen"}
POD = {"no": "none", "literal": "literal", "synonymous": "synonymous", "inference": "inference",
       "one distractor": "one_same_paragraph", "two or more\ndistractors": "two_same_paragraph",
       "based on info\noutside the text": "outside_text"}
PHR = {"1": "1", "2": "2", "3": "3", "4": "4+", "4+": "4+"}
ITEMS = {"1": "1", "2": "2", "3-4": "3-4", "5+": "5+"}
REQ_P = {"1": "1", "1+": "2+", "2+": "2+"}
INFER_C = {"1 paragraph or compare": "compare", "1+ paragraphs or contrast": "contrast"}
MULTIP = {"Number of responses is specified": "specified", "Number of responses is unspecified": "unspecified",
          "specified": "specified", "unspecified": "unspecified"}
TOC = {"addition (+)": "addition", "subtraction (-)": "subtraction", "multiplication (*)": "multiplication",
       "division (/)": "division", "multiple operations": "multiple", "no calculations": "none"}

FIELDS = {  # raw field -> (variable, vocabulary)
    "tom": ("tom", TOM), "pod": ("pod", POD), "phr": ("nphr", PHR), "items": ("ni", ITEMS),
    "req_p": ("npar", REQ_P), "infer_c": ("ic", INFER_C), "multip": ("nit", MULTIP), "toc": ("toc", TOC),
}
RAW_FIELD = {var: field for field, (var, _) in FIELDS.items()}
RAW_FIELD["toi"] = "toi"


def _inverse(vocab: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw, key in vocab.items():
        out.setdefault(key, raw)  # first spelling wins ("4" before "4+")
    return out


def _parse_toi(raw: str) -> str:
    pts, _, concept = raw.rpartition("||")
    concept = " ".join(concept.split()).lower()
    if concept in D.TOI_CONCEPTS:
        return concept
    # Table 2's added concepts, by their full name or one of their words ("job" -> the
    # person / group / role the points say)
    for added, mapped in D.TOI_ADDED.items():
        names = [added] + [w.strip() for w in re.split(r"[,()]", added) if w.strip()]
        if concept in names:
            if len(mapped) == 1:
                return added
            fit = [m for m in mapped if pts and D.TOI_CONCEPTS[m] == _number(pts)]
            if fit:
                return fit[0]
    raise UnknownValue("difficulty.toi", raw, sorted(D.TOI_CONCEPTS))


def _number(s: str) -> float | None:
    return values.decimal_number(s)  # ASCII digits only, finite: as every reader's numbers


_REL = {"lm": "lm", "sm": "sm", "llti": "llti", "hlti": "hlti", "gen": "gen"}


def _norm(v: str) -> str:
    return " ".join(str(v).split()).lower()


def _lookup(field: str, vocab: dict[str, str], v: str) -> str:
    """Exact spelling first, then the same words with any spacing or case; TOM also as
    "both X" / "one X, other Y" for any pair of relations."""
    if v in vocab:
        return vocab[v]
    n = _norm(v)
    for raw, key in vocab.items():
        if _norm(raw) == n:
            return key
    if field == "tom":
        m = re.fullmatch(r"both (\w+)", n) or re.fullmatch(r"one (\w+),? (?:the )?other (\w+)", n)
        if m and all(g in _REL for g in m.groups()):
            rel = m.groups() * (2 // len(m.groups()))
            return D.tom_combined(rel)
    raise UnknownValue(f"difficulty.{field}", v, vocab)


def parse_difficulty(raw: dict | None) -> dict:
    """EMBRACE's `annotations.difficulty` -> `Assessment.values` (ids and offsets are ignored).

    TOM comes back as the combined key (EMBRACE does not record the pair); an absent TOC
    is "none" (EMBRACE writes TOC only when a calculation is needed).
    """
    if not raw:
        return {}
    values: dict[str, Any] = {}
    if raw.get("toi") is not None:
        values["toi"] = _parse_toi(raw["toi"])
    for field, (var, vocab) in FIELDS.items():
        v = raw.get(field)
        if v is None:
            continue
        values[var] = _lookup(field, vocab, v)
    if values and "toc" not in values:
        values["toc"] = "none"
    return values


def _raw_value(var: str, value: Any) -> str:
    if var == "toi":
        pts = D.points("toi", value)
        concept = D.TOI_ADDED[value][0] if value in D.TOI_ADDED else value
        return f"{pts:g}||{concept}"
    if var == "toc" and value == "none":
        return "no calculations"
    if var == "tom":
        value = D.tom_key(value)
    return _inverse(FIELDS[RAW_FIELD[var]][1])[value]


def unparse_difficulty(values: dict, raw: dict | None) -> dict | None:
    """`Assessment.values` -> EMBRACE's difficulty dict, starting from the original `raw`.

    Unchanged values give back `raw` itself; changed ones are rewritten in EMBRACE's
    strings, cleared ones are removed, and every other key of `raw` is kept.
    """
    old = parse_difficulty(raw)
    new = {k: v for k, v in values.items() if v is not None}
    if "toc" not in new and old:
        new["toc"] = "none"
    if old == new:
        return raw
    if raw is None and not new:
        return None
    out = dict(raw or {})
    for var in D.VARIABLES:
        if old.get(var) == new.get(var):
            continue
        field = RAW_FIELD[var]
        if new.get(var) is None or (var == "toc" and new[var] == "none"):
            out.pop(field, None)
        else:
            out[field] = _raw_value(var, new[var])
    return out
