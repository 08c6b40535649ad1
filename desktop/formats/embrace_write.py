"""Writing EMBRACE: each passage's record rebuilt from the one read, with only what the
domain objects say differently overlaid (an unedited import is written back byte for byte)."""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from desktop.domain import resolve
from desktop.domain.model import LETTERS, Dataset, Passage, Question, Span

from . import embrace_fields as F
from . import embrace_vocab as V
from . import safe_read
from .race import in_order


def _span_record(span: Span, text: str, default_marker: dict) -> dict:
    rec = copy.deepcopy(span.extra.get("record") or {"marker": default_marker})
    rec.update({"text": text[span.start:span.end], "start": span.start, "end": span.end})
    return rec


def question_record(q: Question, passage: Passage, text_flags: dict, annotator: str | None = None
                    ) -> tuple[dict, dict | None]:
    """(question record, this question's view of the text flags, None when its problems are unchanged).

    The annotations written are the item's layers resolved as the window shows them
    (`desktop.domain.resolve.item`, `annotator` on top)."""
    shown = resolve.item(q, annotator)
    original = q.extra.get("embrace") or {}
    qrec = copy.deepcopy(original) if original else {"id": q.id}
    prefixes = list(q.extra.get("choice_prefixes") or [])
    prefixes += [f"({LETTERS[i]}) " for i in range(len(prefixes), len(q.alternatives))]
    mcq = qrec.setdefault("mcq", {})
    mcq["stem"] = q.stem
    mcq["choices"] = [p + a for p, a in zip(prefixes, q.alternatives)]
    labels = [(F.PREFIX.match(p).group(1) if F.PREFIX.match(p) else LETTERS[i]) for i, p in enumerate(prefixes)]
    old_key = mcq.get("key")
    if q.key is None:
        mcq["key"] = old_key
    else:
        label = labels[q.key]
        # keep the original spelling of the key when it still names the same alternative
        mcq["key"] = old_key if isinstance(old_key, str) and old_key.strip().upper() == label.upper() else label
    ann = qrec.setdefault("annotations", {})

    # bases: one per letter, in the original letters (a..d), extended for new alternatives
    old_bases = ann.get("bases") if isinstance(ann.get("bases"), dict) else {}
    letters = list(old_bases) or [LETTERS[i].lower() for i in range(len(q.alternatives))]
    index_of_letter = {}
    for L in letters:
        index_of_letter[L] = labels.index(L.upper()) if L.upper() in labels else LETTERS.index(L.upper())
    for i in range(len(q.alternatives)):
        if i not in index_of_letter.values() and i in shown.bases:
            letters.append(labels[i].lower())
            index_of_letter[labels[i].lower()] = i
    bases: dict[str, Any] = {}
    for L in letters:
        i = index_of_letter[L]
        span = shown.bases.get(i)
        bases[L] = None if span is None else _span_record(
            span, passage.text, {"name": f"Basis for {L.upper()}", "order": 6 + i})
    if "bases" in ann or any(v is not None for v in bases.values()):
        ann["bases"] = bases

    rp = shown.required
    if rp is not None:
        ann["required_paragraphs"] = _span_record(rp, passage.text, {"name": "Required paragraphs", "order": 11})
    else:
        ann.pop("required_paragraphs", None)

    raw = ann.get("difficulty")
    if shown.assessed:
        # the imported record beneath the layers, rewritten where the resolved values differ:
        # a later annotator's NI over the imported TOM, TOI, POD, ... keeps all of them
        raw = shown.raw_difficulty if shown.raw_difficulty is not None else raw
        if F.normal(shown.values) != F.normal(F.parse_difficulty(raw)[0]):
            raw = F.unparse_difficulty(shown.values, copy.deepcopy(raw or {}))
        raw = copy.deepcopy(raw)
    if isinstance(raw, dict):
        for L, b in bases.items():
            if b is None:
                raw.pop(f"{L}_base_s", None)
                raw.pop(f"{L}_base_e", None)
            else:
                raw[f"{L}_base_s"], raw[f"{L}_base_e"] = b["start"], b["end"]
        if "key" in raw:
            raw["key"] = mcq["key"]
        ann["difficulty"] = raw

    if shown.comments or "comments" in ann:
        ann["comments"] = list(shown.comments)

    # Problems: compared with what the original record gives, so an unedited question is
    # left exactly as it was.  Text-level flags are shared by the passage's questions:
    # each changed question returns its view of them and `passage_record` merges the views.
    text_view = None
    parsed = F.parse_problems(text_flags, original) if original else []
    if F.tag_key(q.problems) != F.tag_key(parsed):
        text_view, updates = V.problems_to_embrace(q.problems, copy.deepcopy(text_flags), copy.deepcopy(qrec))
        for k, v in (updates or {}).items():
            if k == "flags":  # question-level flags live on the record, not in annotations
                if v:
                    qrec["flags"] = v
                else:
                    qrec.pop("flags", None)
            else:
                ann[k] = v
    if shown.text_format is not None:
        if isinstance(ann.get("problems"), dict):
            ann["problems"]["complex"] = V.text_format_to_embrace(shown.text_format, shown.multiple_texts, qrec)
    return qrec, text_view


def _merge_text_flags(original: dict, views: list[dict | None]) -> dict:
    """One passage's text flags from the views of its edited questions: what any view
    removed goes, what any view added comes (once), the rest keeps its place."""
    views = [v or {} for v in views]
    if not views:
        return copy.deepcopy(original)
    out: dict[str, Any] = {}
    for field in dict.fromkeys(list(original) + [f for v in views for f in v]):
        orig = original.get(field)
        orig_list = [orig] if isinstance(orig, str) else list(orig or [])
        keep = [x for x in orig_list if all(x in _as_list(v.get(field)) for v in views)]
        added = [x for v in views for x in _as_list(v.get(field)) if x not in orig_list]
        values = keep + list(dict.fromkeys(added))
        if isinstance(orig, str) and len(values) == 1:
            out[field] = values[0]
        elif values or (field in original and not orig_list):
            out[field] = values
    return out


def _as_list(v: Any) -> list:
    return [] if v is None else [v] if isinstance(v, str) else list(v)


def passage_record(passage: Passage, annotator: str | None = None) -> dict:
    rec = copy.deepcopy(passage.extra.get("embrace") or {"id": passage.id})
    original_flags = rec.get("flags")
    text_flags = copy.deepcopy(original_flags) if isinstance(original_flags, dict) else {}
    test, views = [], []
    for q in sorted(passage.questions, key=lambda q: q.index):
        qrec, view = question_record(q, passage, text_flags, annotator)
        test.append(qrec)
        if view is not None and view != text_flags:
            views.append(view)
    text_flags = _merge_text_flags(text_flags, views) if views else text_flags
    if isinstance(original_flags, dict) or text_flags:
        rec["flags"] = text_flags
    rec["text"] = passage.text
    rec["test"] = test
    return in_order(rec, passage.extra.get("keys"))


def write(datasets: Dataset | list[Dataset], path: str | os.PathLike, annotator: str | None = None) -> None:
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    style = next((ds.extra["json_style"] for ds in datasets if ds.extra.get("json_style")), None)
    lines = [safe_read.dumps_line(passage_record(p, annotator), style) for ds in datasets for p in ds.passages]
    end = "\n" if (style or {}).get("final_newline", True) else ""
    safe_read.write_text_atomic(Path(path), "\n".join(lines) + end if lines else "")
