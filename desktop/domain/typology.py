"""EMBRACE's error typology (section 5.1.3, Table 4, Appendix B) and acceptability.

Each problem type has a tier (severe, moderate, mild) and the MCQ elements it can
apply to.  Table 4 is garbled in the seed's extraction; the tiers follow the table's
columns as far as they can be read, and the released annotations where they cannot
(../shared/README.md): space and punctuation/formatting problems are mild; spelling
with hyphens or contractions, additional notes and inconsistency between
alternatives are moderate.  The acceptability of an element, and of the item, is its
worst tier.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

SEVERE, MODERATE, MILD = "severe", "moderate", "mild"
TIERS = (SEVERE, MODERATE, MILD)  # worst first

ACCEPTABLE = "acceptable"
MAINLY = "mainly acceptable"
PARTIALLY = "partially acceptable"
UNACCEPTABLE = "unacceptable"
ACCEPTABILITY = (ACCEPTABLE, MAINLY, PARTIALLY, UNACCEPTABLE)  # best first
_BY_TIER = {None: ACCEPTABLE, MILD: MAINLY, MODERATE: PARTIALLY, SEVERE: UNACCEPTABLE}

# Elements (ProblemTag.element)
TEXT, QUESTION, ALTERNATIVES = "text", "question", "alternatives"
QUESTION_TEXT, TEXT_ALTERNATIVES = "question-text", "text-alternatives"
QUESTION_ALTERNATIVES, BETWEEN_ALTERNATIVES = "question-alternatives", "between-alternatives"
ELEMENTS = (TEXT, QUESTION, ALTERNATIVES, QUESTION_TEXT, TEXT_ALTERNATIVES,
            QUESTION_ALTERNATIVES, BETWEEN_ALTERNATIVES)
# The report's three columns: combinations count towards the item only, the
# alternatives column takes "between alternatives" (Fig. 6 rates alternatives as a whole).
ELEMENT_GROUP = {TEXT: TEXT, QUESTION: QUESTION, ALTERNATIVES: ALTERNATIVES,
                 BETWEEN_ALTERNATIVES: ALTERNATIVES, QUESTION_TEXT: "combination",
                 TEXT_ALTERNATIVES: "combination", QUESTION_ALTERNATIVES: "combination"}

NOTE = "note"  # free text that names no type: shown, never given a tier

_TQA = (TEXT, QUESTION, ALTERNATIVES)


@dataclass(frozen=True)
class ProblemType:
    key: str
    name: str
    tier: str | None
    elements: tuple[str, ...]
    glossary: str
    detectable: bool = False  # the surface linter has rules for it


_TYPES = [
    # --- severe ---------------------------------------------------------------
    ProblemType("incomplete_text", "Incomplete text", SEVERE, (TEXT,),
                "The text does not provide enough information to relate the question."),
    ProblemType("misleading_gaps", "Misleading gap(s)", SEVERE, _TQA,
                "A piece of information is missed in an MCQ element and prevents a reader from "
                "understanding of the content and/or answering the given question (if in the text, it "
                "often appears in the key paragraph and a basis for one or more alternatives). The gaps "
                "might or might not be marked with an underscore (_)."),
    ProblemType("extra_gaps", "Extra gaps", SEVERE, _TQA,
                "A piece of information is or might be missed in an MCQ element, though has no "
                "significant influence on general understanding of the content and answering the given "
                "question (in the text it might be misleading for another question to the same text). "
                "Some of the gaps are marked with an underscore (_)."),
    ProblemType("misleading_spaces", "Misleading spaces", SEVERE, _TQA,
                "One or more spaces are inserted before/after a punctuation mark where they are "
                "erroneous according to the English language rules, and lead to (misleading) spelling "
                "errors."),
    ProblemType("extra_spaces_word", "Extra spaces (within a word or a digit)", SEVERE, _TQA,
                "One or more spaces are inserted in the middle of a word or a multi-digit number, which "
                "leads to a (misleading) spelling error or confusion in the data interpretation. Web "
                "addresses count as one word, a currency symbol and figure as one digit; stable phrases "
                "and abbreviations with no fixed written form (a.m. / am / AM) are only checked for "
                "consistent formatting within the text."),
    ProblemType("missing_spaces_words", "Missing spaces (between words and/or digits)", SEVERE, _TQA,
                "Lack of a blank area to separate two or more words or a word and a digit; can also "
                "lead to (misleading) spelling errors."),
    ProblemType("misleading_spelling", "Misleading spelling errors", SEVERE, _TQA,
                "A word/phrase is formed incorrectly in terms of choice of letters, order of letters, or "
                "usage of special characters/symbols (e.g., hyphens, apostrophes), which makes it "
                "impossible to recognise the affected word/phrase properly or results in a different "
                "word/phrase implying other meaning(s)."),
    ProblemType("spelling_errors", "Spelling errors (except hyphens and contractions)", SEVERE, _TQA,
                "A word/phrase is formed incorrectly in terms of choice of letters, order of letters, "
                "capitalisation or usage of special characters/symbols according to the rules of British "
                "or American English, depending on the language of each given text."),
    ProblemType("grammatical_errors", "Grammatical errors", SEVERE, _TQA,
                "A sentence contains a faulty, uncommon, or controversial usage of the English language "
                "(e.g., pronoun disagreement, misuse of articles, grammar tenses, modifiers), or breaks "
                "the English grammar rules."),
    ProblemType("syntax_errors", "Syntax errors", SEVERE, _TQA,
                "Incorrect word order in one or more sentences, or unnecessary repetition of one or more "
                "syntactic unit."),
    ProblemType("ocr_errors", "OCR errors", SEVERE, _TQA,
                "Faults caused by inaccurate optical character recognition; often leads to (misleading) "
                "spelling errors, digits inserted in a word, and letters inserted in a multi-digit "
                "number.", detectable=True),
    ProblemType("time_dependent", "Time-dependent", SEVERE, _TQA,
                "The requested information is related to the period of time that passed from the date of "
                "publication of the text or of an event in it; this makes the correct answer not stable "
                "and requires changes in corresponding periods of time (months, years, ...)."),
    ProblemType("incomplete_question", "Incomplete question", SEVERE, (QUESTION,),
                "The question fails to provide a comprehensible query and/or cannot be related to the "
                "text."),
    ProblemType("answerable_without_reading", "Answerable without reading", SEVERE, (QUESTION,),
                "It is possible to answer the question by analysing alternatives, without reading the "
                "given passage, or even without reading the alternatives (often questions on stable "
                "facts, common truth, meanings of expressions, and definitions)."),
    ProblemType("subjective_formulation", "Subjective formulation", SEVERE, (QUESTION, ALTERNATIVES),
                "The question or one or more of the alternatives requires evaluation of an object or "
                "phenomenon based on a reader's personal opinion, feelings or experience, where the "
                "answer will likely lack grounds for objective evaluation."),
    ProblemType("ambiguously_formulated", "Ambiguously formulated", SEVERE, (QUESTION,),
                "The question is formulated in a way that does not make the query clear or allows two "
                "possible interpretations. Sometimes the result of wrongly used pronouns in the "
                "question."),
    ProblemType("incomplete_alternatives", "Incomplete alternative(s)", SEVERE, (ALTERNATIVES,),
                "One or more of the alternatives fails to provide a comprehensible piece of information "
                "to be related to the given question and/or text."),
    ProblemType("overlapping_alternatives", "Overlapping alternatives", SEVERE, (ALTERNATIVES,),
                "More than one alternative satisfies the conditions stated in the question and thus "
                "results in more than one correct answer to one and the same question."),
    ProblemType("inconsistency_q_a", "Inconsistency between Q and A", SEVERE, (QUESTION_ALTERNATIVES,),
                "The question and one or more of the alternatives within one MCQ unit represent "
                "different types of information."),
    ProblemType("inconsistency_q_t", "Inconsistency between T and Q", SEVERE, (QUESTION_TEXT,),
                "The data requested by the question is not provided or cannot be inferred from the "
                "text."),
    ProblemType("inconsistency_t_a", "Inconsistency between T and A", SEVERE, (TEXT_ALTERNATIVES,),
                "The data provided in the text do not correspond semantically to that in one or more of "
                "the alternatives."),
    # --- moderate -------------------------------------------------------------
    ProblemType("spelling_hyphens_contractions", "Spelling errors (hyphens, contractions)", MODERATE, _TQA,
                "Incorrect usage of hyphens and contractions (or missing symbols), often a result of "
                "extra or missing spaces, which might lead to misleading spelling errors.",
                detectable=True),
    ProblemType("additional_notes", "Additional notes", MODERATE, _TQA,
                "An MCQ element contains special characters, symbols, or remarks (e.g., prefix = st1 /, "
                "s6t--) which are not related to the main content, are unnecessary for a reader of a "
                "reading comprehension test (e.g., number of words, source references), or provide "
                "vague specifications.", detectable=True),
    ProblemType("inconsistency_between_alternatives", "Inconsistency between A", MODERATE,
                (ALTERNATIVES, BETWEEN_ALTERNATIVES),
                "Alternatives within one and the same MCQ unit do not correspond in represented type of "
                "content."),
    # --- mild -----------------------------------------------------------------
    ProblemType("extra_spaces_punctuation", "Extra spaces (punctuation)", MILD, _TQA,
                "One or more spaces are inserted before/after a punctuation mark where they are "
                "erroneous according to the English language rules.", detectable=True),
    ProblemType("missing_spaces_punctuation", "Missing spaces (punctuation)", MILD, _TQA,
                "Lack of a blank area to separate one or more punctuation marks from a following word, "
                "digit, or another punctuation mark, according to the English punctuation rules.",
                detectable=True),
    ProblemType("punctuation_errors", "Punctuation errors", MILD, _TQA,
                "Wrong choice or usage of punctuation symbols according to the English punctuation rules "
                "(periods instead of commas and vice versa, unnecessary or missed punctuation marks).",
                detectable=True),
    ProblemType("formatting_inconsistency", "Formatting inconsistency", MILD,
                _TQA + (BETWEEN_ALTERNATIVES,),
                "For questions: the part claimed to be formatted in a certain way (e.g., underlined) "
                "cannot be found as such or differs in actual formatting. For alternatives: formatting "
                "rules (capitalisation of the first word, punctuation at the end, ...) differ within "
                "one MCQ unit. For texts: formatting rules for abbreviations, numbers, or lists are not "
                "completely followed. It might be a meta-clue to the correct answer or confuse a "
                "reader.", detectable=True),
    # EMBRACE's annotation tool offers these two labels next to the "(punctuation)" ones;
    # in the released data they are mild (they sit in the yellow file), so they are kept
    # as their own types rather than read as the severe within-word/between-word ones.
    ProblemType("extra_spaces", "Extra spaces (EMBRACE tool label)", MILD, _TQA,
                "EMBRACE's label 'extra spaces' without '(punctuation)'; in the released annotations "
                "it marks mild space problems (it nearly always comes with 'extra spaces "
                "(punctuation)'). Use 'Extra spaces (within a word or a digit)' for the severe kind."),
    ProblemType("missing_spaces", "Missing spaces (EMBRACE tool label)", MILD, _TQA,
                "EMBRACE's label 'missing spaces' without '(punctuation)'; in the released annotations "
                "it marks mild space problems. Use 'Missing spaces (between words and/or digits)' for "
                "the severe kind."),
    ProblemType(NOTE, "Note", None, ELEMENTS,
                "A remark of the annotator that names no problem type; shown as written and not counted "
                "for acceptability."),
]

TYPES: dict[str, ProblemType] = {t.key: t for t in _TYPES}


def tier(type_key: str) -> str | None:
    return TYPES[type_key].tier


def glossary(type_key: str) -> str:
    """Tooltip text: name, tier, elements and the Appendix B definition."""
    t = TYPES[type_key]
    head = f"{t.name} ({t.tier or 'no tier'}; {', '.join(t.elements)})"
    return f"{head}: {t.glossary}"


def types_for(element: str) -> list[ProblemType]:
    """Problem types an annotator may pick for an element, worst tier first."""
    order = {SEVERE: 0, MODERATE: 1, MILD: 2, None: 3}
    return sorted((t for t in _TYPES if element in t.elements), key=lambda t: order[t.tier])


def check(type_key: str, element: str) -> str | None:
    """None if the type applies to the element, else a message."""
    if type_key not in TYPES:
        return f"unknown problem type {type_key!r}"
    if element not in TYPES[type_key].elements:
        return f"{TYPES[type_key].name} does not apply to {element} (only {', '.join(TYPES[type_key].elements)})"
    return None


def worst_tier(tiers: Iterable[str | None]) -> str | None:
    found = set(tiers)
    for t in TIERS:
        if t in found:
            return t
    return None


def acceptability_of_tier(t: str | None) -> str:
    return _BY_TIER[t]


def counted(tags, include_suggestions: bool = False):
    """Tags that count: suggestions (origin "model") only when asked for."""
    return [t for t in tags if include_suggestions or getattr(t, "origin", None) != "model"]


def acceptability(tags, element_group: str | None = None, include_suggestions: bool = False) -> str:
    """Worst tier of the tags (of one element group: text, question, alternatives,
    combination; None = the whole item) as an acceptability class."""
    ts = [TYPES[t.type].tier for t in counted(tags, include_suggestions)
          if t.type in TYPES and (element_group is None or ELEMENT_GROUP.get(t.element) == element_group)]
    return _BY_TIER[worst_tier(ts)]


def item_worst_tier(tags, include_suggestions: bool = False) -> str | None:
    return worst_tier(TYPES[t.type].tier for t in counted(tags, include_suggestions) if t.type in TYPES)


def mcq_unit_acceptability(tags, include_suggestions: bool = False) -> str:
    """Acceptability of the MCQ unit (question, alternatives and their combinations) for Fig. 3."""
    ts = [TYPES[t.type].tier for t in counted(tags, include_suggestions)
          if t.type in TYPES and t.element != TEXT]
    return _BY_TIER[worst_tier(ts)]
