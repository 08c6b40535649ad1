"""The surface linter's suggestions for one item, less those already accepted or dismissed.

`desktop.domain.surface_lint.detect` is cheap (under a millisecond an item), so the
suggestions are computed when an item opens rather than stored.  The annotator's
answer is stored, as one `problem.add` each (so it has a history row and undoes):
accepting stores the tag with origin "model-accepted"; dismissing stores it with
origin "model" and `extra["dismissed"]`, which the typology never counts and the
EMBRACE writer never writes, and which keeps the suggestion from coming back.
No Qt here, but for the found stretch's two colours, which come from the window's theme.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from desktop.domain import surface_lint
from desktop.domain.model import MODEL, MODEL_ACCEPTED, ProblemTag, Question, letter

CONTEXT = 24  # characters shown on each side of what the linter found


@dataclass
class Suggestion:
    tag: ProblemTag
    where: str  # "text", "question" or "alternative C"
    excerpt_html: str  # the found stretch marked inside its context
    already_tagged: bool  # the annotator already has this type on this element (no span)


def key(t: ProblemTag) -> tuple:
    return (t.type, t.element, t.alternative, t.start, t.end)


def is_dismissal(t: ProblemTag) -> bool:
    return t.origin == MODEL and bool((t.extra or {}).get("dismissed"))


def pending(question: Question, passage_text: str) -> list[Suggestion]:
    closed = {key(p) for p in question.problems if p.origin == MODEL_ACCEPTED or is_dismissal(p)}
    tagged = {(p.type, p.element, p.alternative) for p in question.problems if p.origin != MODEL}
    stored = [p for p in question.problems if p.origin == MODEL and not is_dismissal(p)]
    out, seen = [], set()
    for t in surface_lint.detect(question, passage_text) + stored:
        k = key(t)
        if k in closed or k in seen:
            continue
        seen.add(k)
        out.append(Suggestion(tag=t, where=_where(t), excerpt_html=_excerpt(t, question, passage_text),
                              already_tagged=(t.type, t.element, t.alternative) in tagged))
    return out


def _where(t: ProblemTag) -> str:
    if t.alternative is not None:
        return f"alternative {letter(t.alternative)}"
    return {"alternatives": "alternatives"}.get(t.element, t.element)


def _element_text(t: ProblemTag, question: Question, passage_text: str) -> str:
    if t.element == "text":
        return passage_text
    if t.element == "question":
        return question.stem
    if t.alternative is not None and 0 <= t.alternative < len(question.alternatives):
        return question.alternatives[t.alternative]
    return " / ".join(question.alternatives)


def _excerpt(t: ProblemTag, question: Question, passage_text: str) -> str:
    s = _element_text(t, question, passage_text)
    if t.start is None or t.end is None or not 0 <= t.start <= t.end <= len(s):
        return html.escape(s[:2 * CONTEXT] + ("…" if len(s) > 2 * CONTEXT else ""))
    a, b = max(0, t.start - CONTEXT), min(len(s), t.end + CONTEXT)
    found = s[t.start:t.end].replace(" ", "␣") or "▴"  # a space or a gap must stay visible
    return ("…" if a else "") + html.escape(s[a:t.start]) + \
        f"<b style='background:{_found()[0]}; color:{_found()[1]}'>{html.escape(found)}</b>" + \
        html.escape(s[t.end:b]) + ("…" if b < len(s) else "")


def _found() -> tuple[str, str]:
    """The marker of what the linter found: from the window's theme when there is one."""
    try:
        from desktop.ui.kit.colors import theme  # Qt: only when the window asks
        t = theme()
        return t.found_bg, t.found_text
    except ImportError:  # pragma: no cover - no Qt installed
        return "#FFD6D6", "#8B0000"


def change_value(t: ProblemTag, passage_len: int, accept: bool) -> dict[str, Any]:
    """The `problem.add` value that records the annotator's answer to a suggestion."""
    value: dict[str, Any] = {"type": t.type, "element": t.element,
                             "origin": MODEL_ACCEPTED if accept else MODEL,
                             "note": t.note or "", "extra": dict(t.extra or {})}
    if t.alternative is not None:
        value["alternative"] = t.alternative
    if t.start is not None and t.end is not None:
        if t.end <= passage_len:
            value["start"], value["end"] = t.start, t.end
        else:  # offsets into a stem or an alternative longer than the passage: the store checks the passage's
            value["extra"]["offsets"] = [t.start, t.end]
    if not accept:
        value["extra"]["dismissed"] = True
    return value
