"""The adapted Kirsch–Mosenthal difficulty scale of EMBRACE (section 4.2, Appendix A).

An `Assessment.values` dict maps a variable (toi, tom, nphr, ni, nit, npar, ic, pod,
toc) to a category key defined here; `points(var, key)` gives Appendix A's points
and `total(values)` their sum.  TOM is recorded either as the pair of relations
(T-Q, T-A), each one of lm/sm/llti/hlti/gen (Table 3, symmetric), or as the
combined category (EMBRACE's released data records only that, e.g. "llti_llti").

Where section 4.2 and Appendix A disagree, Appendix A wins: POD's literal and
synonymous categories score 1.5 and 2 there, 2 and 2.5 in the prose of 4.2.8.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

VARIABLES = ("toi", "tom", "nphr", "ni", "nit", "npar", "ic", "pod", "toc")

NAMES = {
    "toi": "Type of information",
    "tom": "Type of match",
    "nphr": "Number of phrases",
    "ni": "Number of items",
    "nit": "Number of items transparency",
    "npar": "Number of required paragraphs",
    "ic": "Infer condition",
    "pod": "Plausibility of distractors",
    "toc": "Type of calculation",
}

# --- TOI: Table 1 / Appendix A concepts -> points ---------------------------------
TOI_CONCEPTS: dict[str, float] = {}
for _pts, _concepts in (
    (1, "person, animal, place, group, thing"),
    (2, "amount, time, attribute, action, location, type/kind, procedure, part"),
    (3, "manner, goal, purpose, condition, predicate adjective, function, alternative, attempt, "
        "sequence, pronominal reference, verification, assertion, problem, solution, role, process"),
    (4, "cause, reason, result, effect, justification, evidence, similarity, opinion, explanation, "
        "theme, pattern"),
    (5, "equivalent, difference, definition, advantage, indeterminate"),
):
    for _c in _concepts.split(", "):
        TOI_CONCEPTS[_c] = _pts

# Table 2: concepts added for RACE, each scored as the concept it maps to.  A job,
# profession or position is person, group or role depending on context: the
# annotator has to choose, so it maps to all three.
TOI_ADDED: dict[str, tuple[str, ...]] = {
    "proper names (people)": ("person",),
    "proper names (published materials, names of events)": ("thing",),
    "contact details (telephone number, email address)": ("thing",),
    "job, profession, position": ("person", "group", "role"),
    "age": ("amount",),
    "prerequisite": ("condition",),
    "attitude": ("opinion",),
    "recommendation, piece of advice": ("opinion",),
    "main idea, purpose of the passage": ("theme",),
    "example": ("equivalent",),
}

# --- TOM: Table 3 ------------------------------------------------------------------
RELATIONS = ("lm", "sm", "llti", "hlti", "gen")
RELATION_NAMES = {
    "lm": "literal match",
    "sm": "synonymous match",
    "llti": "low-level text-based inference",
    "hlti": "high-level text-based inference",
    "gen": "generate the appropriate interpretive framework",
}
# Combined categories (what EMBRACE records): key -> (label, points)
TOM_COMBINED: dict[str, tuple[str, float]] = {
    "lm_lm": ("both literal match", 0.5),
    "lm_sm": ("one literal, the other synonymous match", 1.0),
    "sm_sm": ("both synonymous match", 1.5),
    "lm_llti": ("one LLTI, the other literal match", 2.0),
    "sm_llti": ("one LLTI, the other synonymous match", 2.5),
    "llti_llti": ("both LLTI", 3.0),
    "hlti": ("either requires HLTI (the other LM, SM or LLTI)", 4.0),
    "gen": ("generate the appropriate interpretive framework", 5.0),
}
_RANK = {r: i for i, r in enumerate(RELATIONS)}


def tom_combined(pair: Iterable[str]) -> str:
    """The combined TOM category of a (T-Q, T-A) pair; Table 3 is symmetric."""
    t_q, t_a = list(pair)
    for r in (t_q, t_a):
        if r not in _RANK:
            raise ValueError(f"unknown TOM relation {r!r}; one of {', '.join(RELATIONS)}")
    low, high = sorted((t_q, t_a), key=_RANK.__getitem__)
    # GEN: high-level inference needed for both relations, or a framework on either side
    if high == "gen" or low == "hlti":
        return "gen"
    if high == "hlti":
        return "hlti"
    return f"{low}_{high}"


def tom_pairs(combined: str) -> list[tuple[str, str]]:
    """Every (T-Q, T-A) pair that yields `combined` (what an editor may offer)."""
    return [(a, b) for a in RELATIONS for b in RELATIONS if tom_combined((a, b)) == combined]


def tom_key(value: Any) -> str:
    """TOM value as stored (pair or combined key) -> combined key."""
    if isinstance(value, (list, tuple)):
        return tom_combined(value)
    if value in TOM_COMBINED:
        return value
    raise ValueError(f"unknown TOM category {value!r}")


# --- the other variables: key -> (label, points), in Appendix A's order -------------
SCALES: dict[str, dict[str, tuple[str, float]]] = {
    "nphr": {"1": ("one", 0), "2": ("two", 1), "3": ("three", 2), "4+": ("four or more", 3)},
    "ni": {"1": ("one", 0), "2": ("two", 1), "3-4": ("three-four", 2), "5+": ("five or more", 3)},
    "nit": {"specified": ("specified", 0), "unspecified": ("unspecified", 1)},
    "npar": {"1": ("within paragraph (1)", 0), "2+": ("between paragraphs (2+)", 1)},
    "ic": {
        "compare": ("compare or based on synthesis of features throughout paragraph", 0),
        "contrast": ("contrast or based on synthesis of features throughout paragraphs", 1),
    },
    "pod": {
        "none": ("there is no distracting information in the text", 1),
        "literal": ("distractors correspond literally to the text, not in the key's paragraph", 1.5),
        "synonymous": ("distractors are synonymous to the text, not in the key's paragraph", 2),
        "inference": ("distractors are plausible invited inferences not based on the key's paragraph", 3),
        "one_same_paragraph": ("one distractor is related to information in the key's paragraph", 4),
        "two_same_paragraph": ("two or more distractors are related to information in the key's paragraph", 5),
        "outside_text": ("one or more distractors are plausible inferences from information outside the text", 5),
    },
    "toc": {
        "none": ("no calculations", 0),
        "addition": ("single addition (+); also one-by-one counting", 1),
        "subtraction": ("single subtraction (-)", 2),
        "multiplication": ("single multiplication (*)", 3),
        "division": ("single division (/)", 4),
        "multiple": ("multiple operations", 5),
    },
}
SCALES["tom"] = TOM_COMBINED
SCALES["toi"] = {c: (c, p) for c, p in TOI_CONCEPTS.items()}

THEORETICAL_MIN = 2.5
THEORETICAL_MAX = 29.0
THEORETICAL_MAX_WITHOUT_TOC = 24.0


def categories(var: str) -> list[str]:
    """Category keys of a variable, lowest points first (ties keep Appendix A's order)."""
    scale = SCALES[var]
    return sorted(scale, key=lambda k: scale[k][1])


def label(var: str, value: Any) -> str:
    if var == "tom" and isinstance(value, (list, tuple)):
        return f"T-Q {RELATION_NAMES[value[0]]}, T-A {RELATION_NAMES[value[1]]}"
    key = tom_key(value) if var == "tom" else value
    return SCALES[var][key][0]


def points(var: str, value: Any) -> float:
    """Appendix A's points for one category; ValueError for an unknown one."""
    if var == "tom":
        return TOM_COMBINED[tom_key(value)][1]
    if var == "toi" and value in TOI_ADDED:
        mapped = TOI_ADDED[value]
        if len(mapped) > 1:
            raise ValueError(f"TOI {value!r} is context-dependent: choose one of {', '.join(mapped)}")
        value = mapped[0]
    try:
        return SCALES[var][value][1]
    except KeyError:
        raise ValueError(f"unknown {var.upper()} category {value!r}") from None


def total(values: dict[str, Any], missing_toc_is_zero: bool = True) -> float | None:
    """Final score = TOI + TOM + NPhr + NI + NIt + NPar + IC + POD + TOC; None if incomplete.

    An absent TOC means "no calculations" (EMBRACE records TOC only when one is needed).
    """
    s = 0.0
    for var in VARIABLES:
        if values.get(var) is None:
            if var == "toc" and missing_toc_is_zero:
                continue
            return None
        s += points(var, values[var])
    return s


def missing(values: dict[str, Any]) -> list[str]:
    """Variables not yet assessed (TOC absent counts as 'no calculations')."""
    return [v for v in VARIABLES if v != "toc" and values.get(v) is None]


def toi_from_alternative_types(types: list[str]) -> str:
    """TOI when the alternatives have types: all one type -> that type; 4 different or 2+2 ->
    "indeterminate"; 3 of one type and 1 of another is an error of the item (ValueError)."""
    counts = sorted((types.count(t) for t in set(types)), reverse=True)
    if len(counts) == 1:
        return types[0]
    if len(types) == 4 and counts[:2] == [3, 1]:
        raise ValueError("three alternatives of one type and one of another: an error of the item, not a score")
    return "indeterminate"


# --- assessment principles as validation messages ------------------------------------
@dataclass(frozen=True)
class Message:
    variable: str | None
    level: str  # "error" | "warning" | "info"
    text: str


PRINCIPLES = (
    "The assessment of each MCQ reflects the minimum threshold of skills/knowledge required "
    "from a reader to get the correct answer.",
    "When the item satisfies several categories of one variable (except TOI), the highest-scoring "
    "category is kept (e.g. TOM: T-A combining LM and SM is annotated SM).",
    "When TOI can be characterised by several concepts, the lowest-scoring one is selected.",
    "With several ways to the correct answer and the same final score, the one based on the "
    "closest correspondence between the text and the key is annotated.",
    "With several ways to the correct answer and different final scores, the lowest-scoring way "
    "is annotated.",
    "Annotation is complete when the MCQ is scored under every variable.",
)


def validate(values: dict[str, Any], toi_candidates: Iterable[str] = (),
             pod_candidates: Iterable[str] = (), candidates: dict[str, Iterable[Any]] | None = None) -> list[Message]:
    """The assessment principles of section 4.2 as messages on one assessment.

    `candidates` maps a variable to other categories the annotator considered (TOM as
    pairs or keys); TOI keeps the lowest-scoring concept, every other variable the
    highest-scoring category.  `toi_candidates` / `pod_candidates` are shorthands.
    """
    out: list[Message] = []
    for var, value in values.items():
        if var not in VARIABLES:
            out.append(Message(var, "error", f"{var!r} is not a variable of the scale"))
            continue
        if value is None:
            continue
        try:
            points(var, value)
        except ValueError as exc:
            out.append(Message(var, "error", str(exc)))
    for var in missing(values):
        out.append(Message(var, "warning", f"{NAMES[var]} ({var.upper()}) is not assessed yet: "
                                              "annotation is complete when every variable is scored"))
    # IC is tied to NPar: synthesis across two or more paragraphs already scores IC 1
    if values.get("npar") == "2+" and values.get("ic") == "compare":
        out.append(Message("ic", "error", "NPar is 2+ (between paragraphs): IC is "
                                          "'contrast or synthesis throughout paragraphs' (1 point)"))
    cands = {k: list(v) for k, v in (candidates or {}).items()}
    cands.setdefault("toi", []).extend(toi_candidates)
    cands.setdefault("pod", []).extend(pod_candidates)
    for var, others in cands.items():
        if not others or values.get(var) is None or var not in VARIABLES:
            continue
        try:
            mine = points(var, values[var])
            scored = [(points(var, c), c) for c in others]
        except ValueError as exc:
            out.append(Message(var, "error", str(exc)))
            continue
        if var == "toi":
            low, best = min(scored, key=lambda t: t[0])
            if low < mine:
                out.append(Message("toi", "warning", "several TOI concepts apply: the lowest-scoring one is "
                                                     f"kept ({best!r}, {low:g})"))
        else:
            high, best = max(scored, key=lambda t: t[0])
            if high > mine:
                out.append(Message(var, "warning", f"several {var.upper()} categories apply: the "
                                                   f"highest-scoring one counts ({label(var, best)!r}, {high:g})"))
    if values.get("toi") in TOI_ADDED and len(TOI_ADDED[values["toi"]]) > 1:
        out.append(Message("toi", "error", f"{values['toi']!r} is context-dependent: "
                                           f"choose {' / '.join(TOI_ADDED[values['toi']])}"))
    return out


# --- text format, MCQ unit type, eligibility ------------------------------------------
TEXT_FORMATS = ("continuous", "partly continuous", "non-continuous", "mixed")
UNIT_TYPES = ("content", "structure", "vocabulary")


def eligibility(text_format: str | None, unit_type: str | None, worst_tier: str | None) -> tuple[bool, str]:
    """Whether an item enters difficulty evaluation (section 5.2), and why (not).

    Non-continuous texts, structure- or vocabulary-based units and items with a severe
    problem are out.  Partly continuous texts are in but marked: the seed leaves them
    out of its difficulty statistics because the model has no evidence for them.
    """
    if text_format == "non-continuous":
        return False, "non-continuous text: the scale does not apply"
    if unit_type in ("structure", "vocabulary"):
        return False, f"{unit_type}-based MCQ unit: the scale does not apply"
    if worst_tier == "severe":
        return False, "severe problem: the score may be incorrect or irrelevant"
    if text_format in ("partly continuous", "mixed"):
        return True, (f"{text_format} text: scored, but left out of the seed's difficulty analysis "
                      "(no evidence how non-continuous elements affect difficulty)")
    return True, ""
