"""A linter for surface problems of an item: suggested problem tags with their span.

Rules cover the typology's mechanically detectable types: spaces around punctuation
(extra, missing), spaces inside a word, contraction or number ("middle - aged",
"don ' t", "I' m", "1, 000"), hyphen and contraction spelling ("dont", "doesn`t"),
stray markup and notes ("prefix = st1 /", "(n.)", word counts), formatting
inconsistency between alternatives (capitalisation of the first word, final
punctuation), repeated or misplaced punctuation, and letter/digit mixes typical of OCR.

Every detection is a `ProblemTag` with origin "model" (a suggestion: the annotator
accepts or dismisses it).  `start`/`end` are offsets into the element's own string:
the passage text for "text", the stem for "question", alternative `alternative` for
"alternatives" (the whole list for between-alternative inconsistencies: no span).

The rules are tuned to stay silent on EMBRACE's green items (which have no problems),
at the price of recall: a suggestion a linguist has to dismiss costs more than one
they have to add.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from desktop.domain.model import MODEL, ProblemTag

TEXT, QUESTION, ALTERNATIVES = "text", "question", "alternatives"
DETECTOR = "surface-lint"

_LABEL = re.compile(r"^\s*\(?[A-J]\)\s*")  # "(A) " prefixes of raw EMBRACE choices
_URL = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+|\b\S+\.(?:com|org|net|edu|gov|cn|uk)\b\S*", re.I)
_ABBREV = re.compile(r"\b(?=\w{1,5}\.)(?:(?:[A-Za-z]\.){2,}|(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|No|etc|vs|Co|Inc|Ltd|"
                     r"Mt|Ave|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.)", re.I)
_URL_HINT = re.compile(r"www|http|@|\.(?:com|org|net|edu|gov|cn|uk)\b", re.I)

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
_RULES: list[tuple[str, re.Pattern, int]] = [
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
_COMPOUND = next(rx for t, rx, g in _RULES if "A-Za-z]+)( - " in rx.pattern)


def _is_compound(m: re.Match) -> bool:
    left, sep, right = m.group(1).lower(), m.group(2), m.group(3).lower()
    return left in _LEFT or (right in _RIGHT and sep != "- ")


# runs of punctuation that are ordinary: an ellipsis (with an end mark), "?!", "!!!"
_FINE_RUN = re.compile(r"^(?:\.{3,}[.!?]?|[.!?]?\.{3,}|[!?]+)$")
# a lowercase word following a period is usually not a sentence: "a.m. on", "etc. and"
_GAP = re.compile(r"_+")


def _masked(s: str) -> str:
    """Blank out URLs, e-mail addresses and dotted abbreviations so that their dots and
    commas are not read as punctuation (same length: offsets stay valid)."""
    for rx in ((_URL, _ABBREV) if _URL_HINT.search(s) else (_ABBREV,)):
        s = rx.sub(lambda m: "x" * len(m.group()), s)
    return s


def _tags(s: str, element: str, alternative: int | None = None, offset: int = 0) -> list[ProblemTag]:
    return [_tag(typ, element, alternative, offset + a, offset + b, found) for typ, a, b, found in _found(s)]


@lru_cache(maxsize=4096)
def _found(s: str) -> tuple[tuple[str, int, int, str], ...]:
    """(type, start, end, text) of every rule's match; cached because a passage is linted
    once for each of its questions."""
    out = []
    masked = _masked(s)
    for typ, rx, group in _RULES:
        raw = typ in ("additional_notes", "spelling_hyphens_contractions") or "Mr|Mrs" in rx.pattern
        src = s if raw else masked
        for m in rx.finditer(src):
            if typ == "ocr_errors" and _OCR_OK.match(m.group()):
                continue
            if m.re is _COMPOUND and not _is_compound(m):
                continue
            if typ == "punctuation_errors" and _FINE_RUN.match(m.group().replace(" ", "")):
                continue
            start, end = m.span(group)
            if typ == "extra_spaces_punctuation":
                # spaces around a cloze gap ("because   _  .") are RACE's formatting, not errors
                before = s[:start].rstrip()
                if before.endswith("_"):
                    continue
            out.append((typ, start, end, s[start:end]))
    return tuple(out)


def _tag(typ: str, element: str, alternative: int | None, start: int | None, end: int | None,
         found: str = "") -> ProblemTag:
    return ProblemTag(type=typ, element=element, annotator=DETECTOR, origin=MODEL, alternative=alternative,
                      start=start, end=end, note=f"suggested: {found!r}" if found else "suggested",
                      extra={"detector": DETECTOR})


def detect_text(passage_text: str) -> list[ProblemTag]:
    """Suggestions for the passage (element "text")."""
    return _tags(passage_text, TEXT)


def _stem_rules(stem: str) -> list[ProblemTag]:
    out = []
    # a gap glued to the word before it: "that_."
    for m in re.finditer(r"(?<=[A-Za-z,\"])_", stem):
        out.append(_tag("missing_spaces_punctuation", QUESTION, None, m.start(), m.end(), stem[m.start() - 1:m.end()]))
    # "Which is true according to the passage?": EMBRACE's annotators mark the missing comma
    # before a final "according to ..." every time (and no stem of the green file has one)
    for m in re.finditer(r"(?<=[A-Za-z_])( +)according to\b", stem):
        out.append(_tag("punctuation_errors", QUESTION, None, m.start(1), m.end(1), stem[m.start(1):m.end() ]))
    # punctuation before the stem starts (".The above passage", ".  . Which") or after its end
    m = re.match(r"^\s*[.,;:]+[\s.]*", stem)
    if m:
        out.append(_tag("punctuation_errors", QUESTION, None, m.start(), m.end(), m.group()))
    m = re.search(r"(?<=[._?])\s*\.\s+\.\s*$|[\[(]\s*$", stem)
    if m:
        out.append(_tag("punctuation_errors", QUESTION, None, m.start(), m.end(), m.group()))
    return out


def _first_word(alt: str) -> str:
    m = re.match(r"[\"“'(]*([A-Za-z][\w'’-]*)", _LABEL.sub("", alt))
    return m.group(1) if m else ""


def _capitalised_elsewhere(word: str, context: str) -> bool:
    """A capitalised word inside a sentence of the context is a name, not a style choice."""
    return re.search(rf"(?<=[a-z,;] ){re.escape(word)}\b", context) is not None


def _alternatives_rules(alts: list[str], context: str) -> list[ProblemTag]:
    out: list[ProblemTag] = []
    bodies = [_LABEL.sub("", a).strip() for a in alts]
    if len(bodies) < 2 or any(not b for b in bodies):
        return out
    # capitalisation of the first word
    words = [_first_word(a) for a in alts]
    case = [w[:1].isupper() if w else None for w in words]
    known = [c for c in case if c is not None]
    if known and 0 < sum(known) < len(known):
        upper_minority = sum(known) * 2 < len(known)
        odd = [i for i, c in enumerate(case) if c is not None and c == upper_minority]
        if upper_minority:
            # an uppercase first word is fine when it is a name ("Japan", "Tom's", "I")
            odd = [i for i in odd if words[i] != "I" and not _capitalised_elsewhere(words[i], context)
                   and not any(ch.isupper() for ch in words[i][1:])
                   and not words[i].isupper()
                   and re.search(rf"\b{re.escape(words[i].lower())}\b", context) is not None]
        elif sum(1 for c in known if not c) * 2 == len(known):
            odd = []  # an even split says nothing about which is the rule
        elif all(_capitalised_elsewhere(w, context) or w.isupper() for w, c in zip(words, case) if c):
            odd = []  # the capitalised ones are names ("Charlie Kemp ..."), the lowercase one is the style
        odd = [i for i in odd if not any(ch.isupper() for ch in words[i][1:])]  # "eBay", "iPhone"
        for i in odd:
            start = alts[i].find(words[i])
            out.append(_tag("formatting_inconsistency", ALTERNATIVES, i, start, start + len(words[i]), words[i]))
    # final punctuation
    ends = []
    for b in bodies:
        core = re.sub(r"[\"”')\]]+$", "", b)
        if _ABBREV.search(core[-6:]) and core.endswith("."):
            ends.append(None)  # "10 p.m." ends with an abbreviation's period
        else:
            ends.append(core[-1:] in ".!?")
    known_e = [e for e in ends if e is not None]
    if known_e and 0 < sum(known_e) < len(known_e):
        minority = sum(known_e) * 2 < len(known_e)
        if sum(known_e) * 2 != len(known_e):
            for i, e in enumerate(ends):
                if e is minority:
                    n = len(alts[i].rstrip())
                    out.append(_tag("formatting_inconsistency", ALTERNATIVES, i, max(0, n - 1), n, alts[i][-12:]))
        else:
            out.append(_tag("formatting_inconsistency", ALTERNATIVES, None, None, None, "final punctuation"))
    return out


def detect_item(question, passage_text: str = "") -> list[ProblemTag]:
    """Suggestions for the stem (element "question") and the alternatives."""
    tags = _tags(question.stem, QUESTION) + _stem_rules(question.stem)
    for i, alt in enumerate(question.alternatives):
        # labels "(A) " are the source's numbering, not the alternative's text
        skip = len(_LABEL.match(alt).group()) if _LABEL.match(alt) else 0
        for t in _tags(alt[skip:], ALTERNATIVES, i, skip):
            tags.append(t)
        m = re.match(r"^\s*[.,;:]+\s*(?=\w)", alt[skip:])
        if m:
            tags.append(_tag("punctuation_errors", ALTERNATIVES, i, skip, skip + m.end(), m.group()))
    tags += _alternatives_rules(question.alternatives, passage_text + "\n" + question.stem)
    return _dedupe(tags)


def detect(question, passage_text: str | None = None) -> list[ProblemTag]:
    """All suggestions for one item: passage (when given), stem and alternatives."""
    tags = detect_text(passage_text) if passage_text else []
    return _dedupe(tags + detect_item(question, passage_text or ""))


def _dedupe(tags: Iterable[ProblemTag]) -> list[ProblemTag]:
    seen, out = set(), []
    for t in tags:
        k = (t.type, t.element, t.alternative, t.start, t.end)
        if k not in seen:
            seen.add(k)
            out.append(t)
    return out
