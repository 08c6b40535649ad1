"""The surface linter's rules: what counts as a surface problem of a string, and the words
that decide it.

Rules cover the typology's mechanically detectable types: spaces around punctuation
(extra, missing), spaces inside a word, contraction or number ("middle - aged",
"don ' t", "I' m", "1, 000"), hyphen and contraction spelling ("dont", "doesn`t"),
stray markup and notes ("prefix = st1 /", "(n.)", word counts), repeated or misplaced
punctuation, and letter/digit mixes typical of OCR.  `RULES` lists them as (type, regex,
group to mark); `found_reference` is their definition (every rule's `finditer`), which
`surface_scan.found` computes faster; the rules over a whole item (the stem, the
alternatives' consistency) are `surface_item_rules.py`; `surface_lint.py` runs them all.

The rules are tuned to stay silent on EMBRACE's green items (which have no problems),
at the price of recall: a suggestion a linguist has to dismiss costs more than one
they have to add.
"""
from __future__ import annotations

import re

from desktop.domain.model import MODEL, ProblemTag

TEXT, QUESTION, ALTERNATIVES = "text", "question", "alternatives"
DETECTOR = "surface-lint"

LABEL = re.compile(r"^\s*\(?[A-J]\)\s*")  # "(A) " prefixes of raw EMBRACE choices
URL = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+|\b\S+\.(?:com|org|net|edu|gov|cn|uk)\b\S*", re.I)
ABBREV = re.compile(r"\b(?=\w{1,5}\.)(?:(?:[A-Za-z]\.){2,}|(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|No|etc|vs|Co|Inc|Ltd|"
                     r"Mt|Ave|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.)", re.I)
URL_HINT = re.compile(r"www|http|@|\.(?:com|org|net|edu|gov|cn|uk)\b", re.I)

# Parts of hyphenated compounds: "middle - aged", "well - known", "twenty - five".  A dash
# between clauses ("a shop - a good one") has neither; "one- to two-week" is a
# suspended hyphen, so "to" is no right-hand part.
_LEFT = set((
    "self well ex non anti co pre post multi semi half full long short high low old middle twenty thirty "
    "forty fifty sixty seventy eighty ninety world part great step grand far hard home"
).split())
_RIGHT = set((
    "aged old year years known based like term minded free made class level style friendly sized shaped "
    "fashioned looking related wide proof hearted working speaking owned one two three four five six seven "
    "eight nine law"
).split())

# (type, regex, group to mark) — text-level rules, applied to passage, stem and alternatives
RULES: list[tuple[str, re.Pattern, int]] = [
    # a space before , ; : ! ? or a sentence-final period after a word
    ("extra_spaces_punctuation", re.compile(r"(?<=[A-Za-z0-9)\"'])( +)[,;:!?](?=\s|$|\")"), 1),
    ("extra_spaces_punctuation", re.compile(r"(?<=[A-Za-z)])( +)\.(?=\s|$|\")(?!\s*\.)"), 1),
    # spaces inside a contraction or a hyphenated word break its spelling: Appendix B's
    # "spelling errors (hyphens, contractions) ... often a result of extra or missing spaces"
    ("spelling_hyphens_contractions", re.compile(r"\b[A-Za-z]+( ['’] ?| ?['’] )(?:t|s|m|re|ve|ll|d)\b"), 0),
    ("spelling_hyphens_contractions", re.compile(r"\b([A-Za-z]+)( - | -|- )([A-Za-z]+)\b"), 0),
    # a space after the thousands comma of a number is a space after a punctuation mark
    ("extra_spaces_punctuation", re.compile(r"(?<![\d,.])\b\d{1,3}(, )\d{3}\b(?![,.]\d)"), 0),
    # (two spaces between words are as frequent in green texts as in yellow ones: no rule)
    # a missing space after , ; : ! ? or after a sentence-final period
    ("missing_spaces_punctuation", re.compile(r"(?<=[a-z])[,;:!?](?=[A-Za-z])|(?<= )[,;:!?](?=[A-Za-z])"), 0),
    ("missing_spaces_punctuation", re.compile(r"[.!?,][\"”](?=[A-Za-z])|[a-z]\((?=[a-z])|\)(?=[a-z])"), 0),
    ("missing_spaces_punctuation", re.compile(r"(?<=[a-z]{3})\.(?=[A-Z][a-z])"), 0),
    ("missing_spaces_punctuation", re.compile(r"(?<=[a-z])[\"“](?=[A-Za-z][^\"”]*[\"”][a-z])"), 0),
    ("missing_spaces_punctuation", re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof)(\.)(?=[A-Z][a-z])"), 1),
    # hyphen and contraction spelling
    ("spelling_hyphens_contractions",
     re.compile(r"\b(?:dont|doesnt|didnt|cant|couldnt|wouldnt|shouldnt|isnt|arent|wasnt|werent|hasnt|havent|"
                r"hadnt|youre|theyre|im|ive|youve|theyve|itll|youll)\b"), 0),
    ("spelling_hyphens_contractions", re.compile(r"\b[A-Za-z]+[`´,](?:t|s|m|re|ve|ll|d)\b(?=\W|$)"), 0),
    # stray markup and notes
    ("additional_notes", re.compile(r"prefix\s*=\s*\w+\s*(?:ns\s*=\s*\S+\s*)?/?|<\/?[a-z][^>]{0,80}>|&(?:nbsp|amp|lt|gt);"
                                    r"|\(\s*\d+\s*words?\s*\)|\b(?:word count|words?)\s*:\s*\d+"
                                    r"|\((?:n|v|adj|adv|prep|conj|pron|vt|vi)\.\)|\bs\dt\b", re.I), 0),
    # repeated or misplaced punctuation (an ellipsis is not repetition)
    ("punctuation_errors", re.compile(r"[,;:.!?](?: ?[,;:.!?])+|\(\s*[,.]?\s*\)"), 0),
    # letters inside numbers and digits inside words (OCR)
    ("ocr_errors", re.compile(r"\b[a-z]{2,}\d+[a-z]+\b|\b\d+[lOoI]\d+\b"), 0),
]
_OCR_OK = re.compile(r"^(?:mp[34]s?|\d+(?:st|nd|rd|th|s|am|pm|km|kg|cm|mm|m|g|ml|mph|d|k)s?)$", re.I)
_COMPOUND = next(rx for t, rx, g in RULES if "A-Za-z]+)( - " in rx.pattern)


def _is_compound(m: re.Match) -> bool:
    left, sep, right = m.group(1).lower(), m.group(2), m.group(3).lower()
    return left in _LEFT or (right in _RIGHT and sep != "- ")


# runs of punctuation that are ordinary: an ellipsis (with an end mark), "?!", "!!!"
_FINE_RUN = re.compile(r"^(?:\.{3,}[.!?]?|[.!?]?\.{3,}|[!?]+)$")
# a lowercase word following a period is usually not a sentence: "a.m. on", "etc. and"
_GAP = re.compile(r"_+")


def masked_reference(s: str) -> str:
    """Blank out URLs, e-mail addresses and dotted abbreviations so that their dots and
    commas are not read as punctuation (same length: offsets stay valid)."""
    for rx in ((URL, ABBREV) if URL_HINT.search(s) else (ABBREV,)):
        s = rx.sub(lambda m: "x" * len(m.group()), s)
    return s


def found_reference(s: str) -> tuple[tuple[str, int, int, str], ...]:
    """The rules' definition: every rule's `finditer` over the string.  `surface_scan.found` gives the
    same result faster; tests compare the two on real data."""
    out = []
    masked = masked_reference(s)
    for typ, rx, group in RULES:
        src = s if raw_rule(typ, rx) else masked
        for m in rx.finditer(src):
            hit = keep_match(typ, m, group, s)
            if hit:
                out.append(hit)
    return tuple(out)


def raw_rule(typ: str, rx: re.Pattern) -> bool:
    return typ in ("additional_notes", "spelling_hyphens_contractions") or "Mr|Mrs" in rx.pattern


def keep_match(typ: str, m: re.Match, group: int, s: str):
    if typ == "ocr_errors" and _OCR_OK.match(m.group()):
        return None
    if m.re is _COMPOUND and not _is_compound(m):
        return None
    if typ == "punctuation_errors" and _FINE_RUN.match(m.group().replace(" ", "")):
        return None
    start, end = m.span(group)
    # spaces around a cloze gap ("because   _  .") are RACE's formatting, not errors
    if typ == "extra_spaces_punctuation" and s[:start].rstrip().endswith("_"):
        return None
    return typ, start, end, s[start:end]


def tag(typ: str, element: str, alternative: int | None, start: int | None, end: int | None,
         found: str = "") -> ProblemTag:
    return ProblemTag(type=typ, element=element, annotator=DETECTOR, origin=MODEL, alternative=alternative,
                      start=start, end=end, note=f"suggested: {found!r}" if found else "suggested",
                      extra={"detector": DETECTOR})
