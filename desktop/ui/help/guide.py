"""The annotation guide shown under Help: what to mark, how to score, how to read the model.

The prose is ours, written for annotators from the seeds (EMBRACE section 4 and its
appendices, ExpMRC's evidence annotation, the World Knowledge paper's N and MI).  Every
category list, its points and every problem type come from `desktop.domain`
(difficulty.py, typology.py), so the guide cannot drift from what the form offers.
Sections have anchors (`guide#toi`, `guide#typology`, …) that tooltips name and the
help window opens.  No Qt here: the help window renders the HTML.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

from desktop.domain import difficulty as km
from desktop.domain import typology as ty
from desktop.domain.words import points

TITLE = "MCQ Lens annotation guide"


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    html: str
    level: int = 2


_pts = points  # "1 pt", "2.5 pts"


def _table(rows: list[tuple[str, str]], head: tuple[str, str] = ("Category", "Points")) -> str:
    body = "".join(f"<tr><td>{html.escape(a)}</td><td align='right'>{html.escape(b)}</td></tr>" for a, b in rows)
    return (f"<table border='1' cellspacing='0' cellpadding='4'><tr><th align='left'>{head[0]}</th>"
            f"<th align='right'>{head[1]}</th></tr>{body}</table>")


def _scale_rows(var: str) -> list[tuple[str, str]]:
    return [(km.SCALES[var][k][0], _pts(km.SCALES[var][k][1])) for k in km.categories(var)]


# What each variable asks, in our words (the categories below each come from the domain).
_VARIABLE_TEXT = {
    "toi": "What kind of thing must the reader find to answer? Concrete things (a person, a place) are "
           "easy; abstract ones (a cause, a definition, a difference) are hard. Pick the concept that "
           "best names what the key is. The question word is usually a good hint (<i>when</i> → time, "
           "<i>how many</i> → amount). When the alternatives are of different kinds — all four "
           "different, or two and two — choose <b>indeterminate</b>; three of one kind and one of "
           "another is a fault of the item, not a score. Singular or plural makes no difference here.",
    "tom": "How closely do the words of the text match the question (T-Q) and the key (T-A)? Score the "
           "two relations separately in the form; the combined category and its points follow. "
           "<b>Literal match</b>: the same words (contractions, a surname for a full name and close "
           "adjective pairs such as historic/historical still count). <b>Synonymous match</b>: other "
           "words or grammar, same meaning (numbers in words vs. digits too). <b>Low-level inference</b>: "
           "nothing matches directly; the reader joins clauses or sentences, resolves a pronoun, follows "
           "cause and effect. <b>High-level inference</b>: needs more than reading — a calculation, "
           "background knowledge, applying what was read, or the author's purpose. <b>Generate the "
           "interpretive framework</b>: high-level inference on both sides. Swapping T-Q and T-A gives "
           "the same points.",
    "nphr": "How many clauses (main and dependent) the question has; each may add a condition the key "
            "must satisfy. Detached predicatives, parentheticals and prefaces count as phrases too.",
    "ni": "How many separate parts the key has, each of which would be a partial answer on its own "
          "(\"Bob and Jane\" has two). For combined alternatives (\"both A and B\", \"all of the "
          "above\") count the items the key really contains.",
    "nit": "Does the reader know how many items to look for? It is <b>specified</b> when the question "
           "says so (\"which two…\") or when every alternative has the same number of items; otherwise "
           "<b>unspecified</b>.",
    "npar": "The fewest paragraphs a reader needs to connect the text with the question and with the "
            "key. Mark them with P in the passage. One paragraph is easier than combining two or more.",
    "ic": "Does the reader look for likeness (<b>compare</b>) or for difference (<b>contrast</b>)? "
          "Contrast — often signalled by <i>not</i>, <i>except</i> or a negative prefix — is harder. "
          "IC follows NPar: when the answer needs two or more paragraphs, the synthesis runs across "
          "paragraphs and IC scores 1; the form then offers only that category.",
    "pod": "How tempting are the distractors? Look at where each distractor's basis lies. When no "
           "distractor is in the key's paragraph, score by how they match the text (literal, synonymous, "
           "an invited inference); when one or more share the key's paragraph, score by how many do. "
           "Distractors that are plausible from knowledge outside the text score the top. Mark the "
           "bases first: they show the distances.",
    "toc": "Whether the answer needs arithmetic, and which. Counting things one by one scores as a single "
           "addition. Most reading questions need none (0 points); EMBRACE leaves TOC out then, and so "
           "does the total here.",
}

# Each problem type in a sentence of our own (the form's tooltips give EMBRACE's full definition).
GLOSS = {
    "incomplete_text": "the passage lacks what is needed to relate it to the question.",
    "misleading_gaps": "something is missing from the text, question or an alternative, and the gap "
                       "stops the reader understanding or answering.",
    "extra_gaps": "something is (or may be) missing, but it does not change understanding or the answer.",
    "misleading_spaces": "a wrong space next to punctuation turns a word into a different or unreadable one.",
    "extra_spaces_word": "a space splits a word or a number, so it reads wrong.",
    "missing_spaces_words": "two words, or a word and a number, run together.",
    "misleading_spelling": "a misspelling that hides the word or makes it another word with another meaning.",
    "spelling_errors": "a misspelled word (letters, order, capitals) that can still be recognised; "
                       "British vs. American spelling is checked against the text's own variety.",
    "grammatical_errors": "a sentence breaks grammar or uses it oddly (agreement, articles, tenses, modifiers).",
    "syntax_errors": "words in the wrong order, or a unit repeated by mistake.",
    "ocr_errors": "scanning slips: digits inside words, letters inside numbers, broken words.",
    "time_dependent": "the answer depends on when the text was published or read, so it goes stale.",
    "incomplete_question": "the question does not ask anything clear, or cannot be tied to the text.",
    "answerable_without_reading": "the key can be found from the alternatives or general knowledge alone; "
                                  "the shortcut model's N and MI help spot these.",
    "subjective_formulation": "answering needs the reader's own opinion or taste, not the text.",
    "ambiguously_formulated": "the question can be read two ways (often a pronoun with two possible referents).",
    "incomplete_alternatives": "an alternative is unfinished or cannot be related to the question or text.",
    "overlapping_alternatives": "more than one alternative is correct.",
    "inconsistency_q_a": "the question asks for one kind of information and an alternative gives another.",
    "inconsistency_q_t": "the text does not contain, or let one infer, what the question asks.",
    "inconsistency_t_a": "what an alternative says does not match what the text says.",
    "spelling_hyphens_contractions": "a hyphen or an apostrophe is wrong or missing (well known, dont), "
                                     "often from a space problem.",
    "additional_notes": "stray marks or remarks that are not part of the content (word counts, sources, "
                        "markup like “prefix = st1 /”).",
    "inconsistency_between_alternatives": "the alternatives are not the same kind of answer.",
    "extra_spaces_punctuation": "a superfluous space before or after a punctuation mark.",
    "missing_spaces_punctuation": "no space after a punctuation mark where one belongs.",
    "punctuation_errors": "the wrong punctuation mark, or one missing or superfluous.",
    "formatting_inconsistency": "formatting that is not kept: capitals or final full stops differ between "
                                "alternatives, an “underlined” word that is not underlined, lists or "
                                "numbers written two ways. It may give the key away.",
    "extra_spaces": "the label EMBRACE's tool used for mild space problems; prefer the more precise types.",
    "missing_spaces": "the label EMBRACE's tool used for mild missing spaces; prefer the more precise types.",
    "note": "a remark that names no problem; shown, never counted.",
}

_TIER_TEXT = {
    ty.SEVERE: "the reader cannot understand the element, or its content becomes unclear or ambiguous. "
               "An item with a severe problem is <b>unacceptable</b> and is left out of difficulty evaluation.",
    ty.MODERATE: "a slip the reader can repair from the rest of the element, or content that does not "
                 "belong in a reading test. The item is <b>partially acceptable</b>.",
    ty.MILD: "a punctuation or spacing rule is broken; reading is not hindered. The item is "
             "<b>mainly acceptable</b>.",
}

_ELEMENT_WORDS = {
    ty.TEXT: "text", ty.QUESTION: "question", ty.ALTERNATIVES: "alternatives",
    ty.QUESTION_TEXT: "question–text", ty.TEXT_ALTERNATIVES: "text–alternatives",
    ty.QUESTION_ALTERNATIVES: "question–alternatives", ty.BETWEEN_ALTERNATIVES: "between alternatives",
}


def _variable_section(var: str) -> Section:
    name = km.NAMES[var]
    body = f"<p>{_VARIABLE_TEXT[var]}</p>"
    if var == "toi":
        rows = [(c, _pts(p)) for c, p in sorted(km.TOI_CONCEPTS.items(), key=lambda t: t[1])]
        body += _table(rows, ("Concept", "Points"))
        body += ("<p>Concepts added for RACE, scored as the concept they stand for "
                 "(a job or position is a person, a group or a role depending on the context: choose one):</p>")
        rows = [(c, " / ".join(f"{m} ({_pts(km.points('toi', m))})" for m in mapped))
                for c, mapped in km.TOI_ADDED.items()]
        body += _table(rows, ("Added concept", "Scored as"))
    elif var == "tom":
        body += "<p>The two relations, easiest first:</p><ul>"
        body += "".join(f"<li><b>{html.escape(km.RELATION_NAMES[r])}</b> ({r.upper()})</li>" for r in km.RELATIONS)
        body += "</ul><p>Their combinations:</p>" + _table(_scale_rows("tom"))
    else:
        body += _table(_scale_rows(var))
    return Section(var, f"{var.upper()} — {name}", body, level=3)


def sections() -> list[Section]:
    """The guide, section by section, in reading order."""
    out = [Section("start", "About this guide",
                   "<p>This guide explains what MCQ Lens asks you to record for each multiple-choice item: "
                   "the <b>evidence</b> and the <b>bases</b> in the passage, the item's difficulty on the "
                   "adapted Kirsch–Mosenthal scale, its problems by the EMBRACE typology, and how to read "
                   "the shortcut model's numbers. Type in the search field to find a word; tooltips in the "
                   "form name the section to read (for example <i>guide#toi</i>). "
                   "Press <b>F1</b> for the keyboard shortcuts.</p>")]
    out.append(Section("evidence", "Evidence",
                       "<p>Evidence is the stretch of the passage that shows the key is right. Mark the "
                       "<b>shortest</b> stretch that still supports the key — it need not be a whole "
                       "sentence — and prefer the passage's own words over a paraphrase of the question. "
                       "When the answer comes from reasoning over several places, mark each place; for "
                       "questions about the whole passage (its title, its main idea) the evidence may be "
                       "long. Select the words and press <b>E</b>. This is what ExpMRC evaluates: a "
                       "system's predicted evidence is compared with yours word by word (evidence F1).</p>"))
    out.append(Section("bases", "Bases",
                       "<p>A basis is the stretch of the passage that an alternative rests on — what makes "
                       "it plausible, whether it is the key or a distractor. Every alternative may have "
                       "one: select the words and press its number (<b>1</b>–<b>5</b>) or letter "
                       "(A–D; E is evidence, so the basis of a fifth alternative is <b>5</b>). Some "
                       "alternatives have no basis in the text (a distractor drawn from general knowledge, "
                       "a key that needs an interpretive framework); mark one when you can, as a way to "
                       "tie the alternative to the text. Bases show where the distractors sit relative to "
                       "the key, which is what POD scores. In the passage each basis has its colour, its "
                       "own underline lane and its letter in the margin.</p>"
                       "<p><b>Required paragraphs</b> (key <b>P</b>) are the paragraphs a reader needs; "
                       "they decide NPar.</p>"))
    total_max = km.THEORETICAL_MAX
    out.append(Section("km", "The adapted Kirsch–Mosenthal difficulty scale",
                       "<p>Difficulty is scored on nine variables; each category earns points, and the item's "
                       "difficulty is their sum: <b>TOI + TOM + NPhr + NI + NIt + NPar + IC + POD + TOC</b>. "
                       f"Totals run from {km.THEORETICAL_MIN:g} to {total_max:g} points "
                       f"({km.THEORETICAL_MAX_WITHOUT_TOC:g} without TOC, which few reading questions need). "
                       "The scale is Kirsch and Mosenthal's, adapted by EMBRACE for RACE: literal and "
                       "synonymous match are separate categories (so TOM has eight combined categories and "
                       "POD seven), NPhr's top category is <i>four or more</i>, and TOC (calculation) is "
                       "added. The form shows the total as you choose and says which variables are still "
                       "open.</p>"))
    out.extend(_variable_section(v) for v in km.VARIABLES)
    out.append(Section("principles", "Assessment principles",
                       "<p>When more than one answer seems right, these rules decide:</p><ul>"
                       + "".join(f"<li>{html.escape(p)}</li>" for p in km.PRINCIPLES) + "</ul>"
                       "<p>In short: score the least a reader must be able to do; within one variable keep "
                       "the highest category that applies, except TOI, where the lowest concept wins.</p>"))
    out.append(Section("eligibility", "Which items are scored",
                       "<p>Describe the text first. Text formats: "
                       + ", ".join(f"<b>{html.escape(f)}</b>" for f in km.TEXT_FORMATS)
                       + ". Continuous texts are paragraphs only; partly continuous ones add headings or "
                       "lists; non-continuous ones are lists, tables, schedules or forms; mixed texts combine "
                       "them. MCQ unit types: "
                       + ", ".join(f"<b>{html.escape(u)}</b>" for u in km.UNIT_TYPES)
                       + " (is the question about the content, the text's structure, or a word?).</p>"
                       "<p>The scale applies to content questions on continuous or partly continuous texts "
                       "without a severe problem. Non-continuous texts, structure and vocabulary questions "
                       "and items with a severe problem are not eligible; the form says so in a banner. "
                       "Partly continuous and mixed texts are scored but kept apart in the analysis.</p>"))
    out.append(_typology())
    for tier in ty.TIERS:
        out.append(_tier_section(tier))
    out.append(Section("model", "The shortcut model: N and MI",
                       "<p>Beside the alternatives the model panel shows two readers. The <b>shortcut</b> "
                       "model (Q+{O}) sees only the question and the alternatives, never the passage; the "
                       "<b>standard</b> model (C+Q+{O}) sees the passage too. If the shortcut model is sure "
                       "of the key, the item may test world knowledge rather than reading.</p>"
                       "<p><b>N, the effective number of options</b>, turns the model's uncertainty "
                       "(the entropy H of its probabilities, in bits) into a count: N = 2<sup>H</sup>. "
                       "It runs from 1 (all probability on one alternative) to the number of alternatives "
                       "(all equally likely). For a good item the shortcut model should be lost: its N "
                       "close to 4 on a four-option item. A shortcut N near 1 with the key predicted means "
                       "the question answers itself — consider the tag <i>Answerable without reading</i>. "
                       "An N of 2–3 means some distractors can be ruled out without the text.</p>"
                       "<p><b>MI, the contextual mutual information</b>, is how much the passage reduces "
                       "that uncertainty: MI = H(shortcut) − H(standard), in bits. High MI means the model "
                       "needs the passage to become sure — what a reading question should do. MI near 0 "
                       "means the passage barely helps.</p>"
                       "<p><b>A negative MI</b> means the model is <i>less</i> sure with the passage than "
                       "without it. True mutual information cannot be negative; the models only approximate "
                       "the real distributions, so small negative values are noise. A clearly negative MI "
                       "is worth a look: the passage may contradict what general knowledge suggests (the "
                       "text says something surprising), or the item may be confusing — an ambiguous stem "
                       "or overlapping alternatives.</p>"
                       "<p><b>Why?</b> (the tab under the figures) shows what gives the key away to the shortcut "
                       "model: each shaded word's number is how many points the picked alternative loses when "
                       "that word alone is taken out. Underlined are the three words that take the most away "
                       "<i>together</i> (when that is more than the strongest of them takes alone), with the "
                       "points the pick loses when all three are taken out at once. Function words (the, of, "
                       "is…) are first taken out in groups, and one by one only where their group matters.</p>"
                       "<p>The panel's title names the model behind the numbers. The shipped default, the "
                       "<b>MPNet one-sequence reader (fast)</b>, reads the passage, the question and all the "
                       "alternatives in one pass of at most 384 tokens with 12 layers; its shortcut numbers "
                       "(no passage) come from a 6-layer student of the same teacher, twice as fast (the "
                       "title's tooltip says which reader reads which format). <b>Model › Choose the "
                       "model…</b> offers its <b>accurate</b> reading: the 12 layers in both formats, at 512 "
                       "tokens (more of a long passage, slower). Both answer about two RACE test questions in "
                       "three with the passage and about one in two without it: read their numbers as a hint, "
                       "not a verdict. They never trained "
                       "on EMBRACE or ExpMRC items. The model's evidence weighs, besides the words a sentence "
                       "shares with the question and alternatives, where the model itself looked: how much the "
                       "chosen alternative attends to the sentence.</p>"))
    return out


def _typology() -> Section:
    classes = [(ty.ACCEPTABLE, "no problem of any tier"), (ty.MAINLY, "its worst problem is mild"),
               (ty.PARTIALLY, "its worst problem is moderate"), (ty.UNACCEPTABLE, "it has a severe problem")]
    body = ("<p>Tag each problem on the element it affects: the text, the question, the alternatives (or one "
            "alternative: use the letter buttons), or a relation between two of them. Every type has a tier, "
            "and an element's — and the item's — <b>acceptability</b> is set by its worst tier:</p><ul>"
            + "".join(f"<li><b>{html.escape(c)}</b>: {w}</li>" for c, w in classes) + "</ul>"
            "<p>The surface linter suggests spacing, punctuation and OCR problems it can find; accept or "
            "dismiss each. Free notes name no type and are never counted.</p>")
    return Section("typology", "The EMBRACE error typology", body)


def _tier_section(tier: str) -> Section:
    body = f"<p><b>{tier.capitalize()}</b>: {_TIER_TEXT[tier]}</p><dl>"
    for t in ty.TYPES.values():
        if t.tier != tier:
            continue
        where = ", ".join(_ELEMENT_WORDS.get(e, e) for e in t.elements)
        body += (f"<dt><a name='type-{t.key}'></a><b>{html.escape(t.name)}</b> "
                 f"<i>({tier}; {html.escape(where)})</i></dt><dd>{html.escape(GLOSS[t.key])}</dd>")
    return Section(f"typology-{tier}", f"{tier.capitalize()} problems", body + "</dl>", level=3)


def _note_section() -> str:
    t = ty.TYPES[ty.NOTE]
    return f"<p><b>{html.escape(t.name)}</b>: {html.escape(GLOSS[t.key])}</p>"


def document() -> str:
    """The whole guide as one HTML page with an anchor per section."""
    parts = [f"<h1>{TITLE}</h1>"]
    for s in sections():
        parts.append(f"<a name='{s.anchor}'></a><h{s.level}>{html.escape(s.title)}</h{s.level}>{s.html}")
        if s.anchor == "typology-mild":
            parts.append(_note_section())
    return "\n".join(parts)


def anchor_for(var: str) -> str:
    """The guide section of a difficulty variable (for tooltips: "guide#toi")."""
    return var.lower()


def reference(anchor: str) -> str:
    """How a tooltip points to a section."""
    return f"Guide: Shift+F1, or Help → Annotation guide (guide#{anchor})"
