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


def _masked_reference(s: str) -> str:
    """Blank out URLs, e-mail addresses and dotted abbreviations so that their dots and
    commas are not read as punctuation (same length: offsets stay valid)."""
    for rx in ((_URL, _ABBREV) if _URL_HINT.search(s) else (_ABBREV,)):
        s = rx.sub(lambda m: "x" * len(m.group()), s)
    return s


def _found_reference(s: str) -> tuple[tuple[str, int, int, str], ...]:
    """The rules' definition: every rule's `finditer` over the string.  `_found` gives the
    same result faster; tests compare the two on real data."""
    out = []
    masked = _masked_reference(s)
    for typ, rx, group in _RULES:
        src = s if _raw(typ, rx) else masked
        for m in rx.finditer(src):
            hit = _keep(typ, m, group, s)
            if hit:
                out.append(hit)
    return tuple(out)


def _raw(typ: str, rx: re.Pattern) -> bool:
    return typ in ("additional_notes", "spelling_hyphens_contractions") or "Mr|Mrs" in rx.pattern


def _keep(typ: str, m: re.Match, group: int, s: str):
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


# --- the same matches, found faster ------------------------------------------------
# Python's regex engine scans quickly only for a pattern that starts with a literal or a
# character set; most rules start with a look-behind or a word boundary and are tried at
# every position (a report on all of RACE spent a minute here).  Each rule below gets a
# cheap "trigger" scan for a character every match must contain, and the rule's own
# regex is then tried with `match` only at the positions a match could start from there
# (walking back over the letters or digits before the trigger).  Matches are taken in
# order without overlap, as `finditer` takes them, so the result is the same as the
# reference; tests/test_lint_surface.py checks it on every EMBRACE, ExpMRC and RACE text.

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")


def _run_start(s: str, end: int, chars: frozenset) -> int:
    """Start of the run of `chars` that ends just before `end`."""
    i = end
    while i > 0 and s[i - 1] in chars:
        i -= 1
    return i


def _before_space(s: str, i: int) -> int:
    return i - 1 if i > 0 and s[i - 1] == " " else i


def _word_before(chars=_LETTERS, space: bool = False, least: int = 1):
    """Candidate start: the run of `chars` just before the trigger (after one optional space)."""
    def starts(s: str, t: re.Match):
        q = _before_space(s, t.start()) if space else t.start()
        r = _run_start(s, q, chars)
        if q - r >= least:
            yield r
    return starts


def _at_trigger(s: str, t: re.Match):
    yield t.start()


def _word_start(s: str, t) -> Iterable[int]:
    p = t.start()
    if p == 0 or not (s[p - 1].isalnum() or s[p - 1] == "_"):  # \b before a letter
        yield p


def _notes_starts(s: str, t) -> Iterable[int]:
    yield t.start() - 1 if s[t.start()].isdigit() else t.start()


def _spaces_before(s: str, t: re.Match):
    yield _run_start(s, t.start(), frozenset(" "))


def _scan(rx: re.Pattern, s: str, trigger, starts):
    """`rx.finditer(s)`, trying `rx` only where `starts` says a match can begin
    (`trigger`: one regex or a tuple of them)."""
    triggers = trigger if isinstance(trigger, tuple) else (trigger,)
    cands = sorted({p for tr in triggers for t in tr.finditer(s) for p in starts(s, t)})
    if not cands:
        return
    end = 0
    for p in cands:
        if p < end:
            continue
        m = rx.match(s, p)
        if m:
            end = max(m.end(), p + 1)
            yield m


class _Words:
    """A trigger of literal words found with `str.find` (much faster than a regex
    alternation here); `fold`: case-insensitive, for ASCII strings (others use `rx`)."""

    def __init__(self, words: str, fold: bool = False):
        self.words, self.fold = words.split("|"), fold
        self.rx = re.compile(words, re.I if fold else 0)

    def finditer(self, s: str):
        if self.fold and not s.isascii():
            yield from self.rx.finditer(s)
            return
        low = s.lower() if self.fold else s
        for w in self.words:
            i = low.find(w)
            while i >= 0:
                yield _At(i)
                i = low.find(w, i + 1)


class _At:
    __slots__ = ("pos",)

    def __init__(self, pos: int):
        self.pos = pos

    def start(self) -> int:
        return self.pos


def _ocr_starts(s: str, t: re.Match):
    # after the whole run of digits: a lowercase letter (letters-digits-letters) or one
    # of "lOoI" (digits-letter-digits); nothing else can follow `\d+` in either branch
    after = s[t.end():t.end() + 1]
    r = _run_start(s, t.start(), _LOWER)
    if t.start() - r >= 2 and after in _LOWER:
        yield r
    if after and after in "lOoI":
        yield t.start()


def _r7_starts(s: str, t: re.Match):
    yield t.start() - 1 if s[t.start()] == "(" else t.start()


def _abbrev_starts(s: str, t: re.Match):
    r = t.start()
    while r > 0 and t.start() - r <= 5 and (s[r - 1].isalnum() or s[r - 1] == "_"):
        r -= 1
    if 1 <= t.start() - r <= 5:
        yield r


# rule index in _RULES -> (trigger, candidate starts); rules not listed already scan fast
_FAST: dict[int, tuple[re.Pattern, object]] = {
    0: (re.compile(r"[,;:!?](?<= [,;:!?])"), _spaces_before),
    1: (re.compile(r"\.(?<= \.)"), _spaces_before),
    2: (re.compile(r"['’]"), _word_before(space=True)),
    3: (re.compile(r"-"), _word_before(space=True)),
    4: (re.compile(r", \d"), _word_before(_DIGITS)),
    5: (re.compile(r"[,;:!?](?=[A-Za-z])"), _at_trigger),
    6: (tuple(re.compile(x) for x in (r"[.!?,][\"”]", r"\(", r"\)")), _r7_starts),
    7: (re.compile(r"\.(?=[A-Z][a-z])"), _at_trigger),
    8: (re.compile(r"[\"“]"), _at_trigger),
    9: (re.compile(r"(?:Mr|Mrs|Ms|Dr|Prof)\."), _at_trigger),
    10: (_Words("dont|doesnt|didnt|cant|couldnt|wouldnt|shouldnt|isnt|arent|wasnt|werent|hasnt|havent|"
                "hadnt|youre|theyre|im|ive|youve|theyve|itll|youll"), _word_start),
    11: (re.compile(r"[`´,](?:t|s|m|re|ve|ll|d)\b"), _word_before()),
    12: ((_Words("prefix|word", fold=True), re.compile(r"[<&(]"), re.compile(r"\d[tT]")), _notes_starts),
    13: ((re.compile(r"[,;:.!?](?= ?[,;:.!?])"), re.compile(r"\(")), _at_trigger),
    14: (re.compile(r"\d+"), _ocr_starts),
}
_ABBREV_TRIGGER = re.compile(r"\.")
# Characters one of which each rule's trigger needs (None: no such short list); an ASCII
# string without any of them skips the rule (masking writes only "x", which is in none).
_NEEDS: dict[int, str | None] = {
    0: ",;:!?", 1: ".", 2: "'’", 3: "-", 4: ",", 5: ",;:!?", 6: "\"”()", 7: ".", 8: "\"“", 9: ".",
    10: None, 11: "`´,", 12: None, 13: ",;:.!?(", 14: "0123456789",
}
_PLAN = [(typ, rx, group, _raw(typ, rx), _FAST[i], None if _NEEDS[i] is None else frozenset(_NEEDS[i]))
         for i, (typ, rx, group) in enumerate(_RULES)]
# What the two rules without such a list need: rule 10 one of its words as a whole run of
# letters ("dont"; \b on both sides); rule 12 "<&(" or a digit, "prefix" anywhere, or
# "word"/"words" as a run of letters.
_WORDS10 = frozenset(_FAST[10][0].words)
_NOTES_CHARS = frozenset("<&(0123456789")
_NOTES_WORDS = frozenset(("word", "words"))
_NEEDS_SETS = [plan[5] for plan in _PLAN]
_LETTER_RUN = re.compile(r"[a-z]+")


_HINTS = ("www", "http", "@", ".com", ".org", ".net", ".edu", ".gov", ".cn", ".uk")


def _masked(s: str) -> str:
    """`_masked_reference`, with the abbreviations found from their periods."""
    low = s.lower()  # folds at least what re.I folds for these letters
    if any(h in low for h in _HINTS) and _URL_HINT.search(s):
        s = _URL.sub(lambda m: "x" * len(m.group()), s)
    parts, last = [], 0
    for m in _scan(_ABBREV, s, _ABBREV_TRIGGER, _abbrev_starts):
        parts += [s[last:m.start()], "x" * (m.end() - m.start())]
        last = m.end()
    return "".join(parts) + s[last:] if parts else s


def _tags(s: str, element: str, alternative: int | None = None, offset: int = 0) -> list[ProblemTag]:
    return [_tag(typ, element, alternative, offset + a, offset + b, found) for typ, a, b, found in _found(s)]


_SHORT = 300  # below this length a rule's own finditer is cheaper than the trigger scan


# Sharper necessary conditions for the rules that "." or "," alone would let run on most
# stems and alternatives (checked on the raw string; masking writes only lowercase "x").
_ALSO = {
    0: lambda s: " ," in s or " ;" in s or " :" in s or " !" in s or " ?" in s,
    1: lambda s: " ." in s,
    7: re.compile(r"\.[A-Z]").search,
    9: lambda s: "Mr." in s or "Mrs." in s or "Ms." in s or "Dr." in s or "Prof." in s,
    13: re.compile(r"[,;:.!?] ?[,;:.!?]|\(").search,
}


def _firing(s: str, chars: frozenset) -> list[bool]:
    """Which rules can match the short ASCII string `s` (with characters `chars`)."""
    fire = [needs is None or not chars.isdisjoint(needs) for needs in _NEEDS_SETS]
    low = s.lower()
    tokens = set(_LETTER_RUN.findall(low))
    fire[10] = not _WORDS10.isdisjoint(tokens)
    fire[12] = not chars.isdisjoint(_NOTES_CHARS) or "prefix" in low or not _NOTES_WORDS.isdisjoint(tokens)
    for i, also in _ALSO.items():
        if fire[i] and not also(s):
            fire[i] = False
    return fire


@lru_cache(maxsize=4096)
def _found(s: str) -> tuple[tuple[str, int, int, str], ...]:
    """(type, start, end, text) of every rule's match, as `_found_reference`; cached because
    a passage is linted once for each of its questions.

    For an ASCII string a rule runs only if a character (or word) its trigger needs is
    there: most stems and alternatives need no rule at all.  Long strings (passages) use
    the trigger scan, short ones the rule's own `finditer`."""
    fire = None
    short = len(s) < _SHORT
    if s.isascii() and short:
        fire = _firing(s, frozenset(s))
        if not any(fire):
            return ()
    elif s.isascii():  # a passage: only the character test (its triggers are cheap scans)
        chars = frozenset(s)
        fire = [plan[5] is None or not chars.isdisjoint(plan[5]) for plan in _PLAN]
    out = []
    masked = None
    for i, (typ, rx, group, raw, (trigger, starts), _) in enumerate(_PLAN):
        if fire is not None and not fire[i]:
            continue
        if not raw and masked is None:
            masked = _masked_reference(s) if short else _masked(s)
        src = s if raw else masked
        for m in (rx.finditer(src) if short else _scan(rx, src, trigger, starts)):
            hit = _keep(typ, m, group, s)
            if hit:
                out.append(hit)
    return tuple(out)


def _tag(typ: str, element: str, alternative: int | None, start: int | None, end: int | None,
         found: str = "") -> ProblemTag:
    return ProblemTag(type=typ, element=element, annotator=DETECTOR, origin=MODEL, alternative=alternative,
                      start=start, end=end, note=f"suggested: {found!r}" if found else "suggested",
                      extra={"detector": DETECTOR})


def detect_text(passage_text: str) -> list[ProblemTag]:
    """Suggestions for the passage (element "text")."""
    return _tags(passage_text, TEXT)


# the item rules' patterns, compiled once (a report lints every stem and alternative)
_GLUED_GAP = re.compile(r"(?<=[A-Za-z,\"])_")
_ACCORDING = re.compile(r"(?<=[A-Za-z_])( +)according to\b")
_LEADING_PUNCT = re.compile(r"^\s*[.,;:]+[\s.]*")
_TRAILING_PUNCT = re.compile(r"(?<=[._?])\s*\.\s+\.\s*$|[\[(]\s*$")
_FIRST_WORD = re.compile(r"[\"“'(]*([A-Za-z][\w'’-]*)")
_CLOSERS = re.compile(r"[\"”')\]]+$")
_ALT_LEADING_PUNCT = re.compile(r"^\s*[.,;:]+\s*(?=\w)")


def _stem_rules(stem: str) -> list[ProblemTag]:
    out = []
    # a gap glued to the word before it: "that_."
    for m in _GLUED_GAP.finditer(stem):
        out.append(_tag("missing_spaces_punctuation", QUESTION, None, m.start(), m.end(), stem[m.start() - 1:m.end()]))
    # "Which is true according to the passage?": EMBRACE's annotators mark the missing comma
    # before a final "according to ..." every time (and no stem of the green file has one)
    for m in _ACCORDING.finditer(stem):
        out.append(_tag("punctuation_errors", QUESTION, None, m.start(1), m.end(1), stem[m.start(1):m.end() ]))
    # punctuation before the stem starts (".The above passage", ".  . Which") or after its end
    m = _LEADING_PUNCT.match(stem)
    if m:
        out.append(_tag("punctuation_errors", QUESTION, None, m.start(), m.end(), m.group()))
    m = _TRAILING_PUNCT.search(stem)
    if m:
        out.append(_tag("punctuation_errors", QUESTION, None, m.start(), m.end(), m.group()))
    return out


def _first_word(alt: str) -> str:
    m = _FIRST_WORD.match(_LABEL.sub("", alt))
    return m.group(1) if m else ""


def _capitalised_elsewhere(word: str, context: str) -> bool:
    """A capitalised word inside a sentence of the context is a name, not a style choice."""
    return _word_pattern(rf"(?<=[a-z,;] ){re.escape(word)}\b").search(context) is not None


@lru_cache(maxsize=65536)
def _word_pattern(pattern: str) -> re.Pattern:
    """Compiled once per word: `re`'s own cache (512 patterns) thrashes over a corpus."""
    return re.compile(pattern)


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
                   and _word_pattern(rf"\b{re.escape(words[i].lower())}\b").search(context) is not None]
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
        core = _CLOSERS.sub("", b)
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
        m = _ALT_LEADING_PUNCT.match(alt[skip:])
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
