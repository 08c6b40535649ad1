"""Out-of-fold predictions that travel with a model directory (`oof_predictions.jsonl`).

A model trained with cross-fitting on in-domain items (the shipped default model saw
the EMBRACE and ExpMRC questions through k folds) must never score those items
itself: its own output on them is in-sample and looks better than it is.  For each
such item the directory carries the logits of the fold model that did *not* train on
it; `inference.score` serves them instead of running the graph.

An entry applies only to the very item it was made for: same source, same id and the
same stem and alternatives (a fingerprint), so an edited scratch copy (what-if) or a
different file that reuses an id is scored by the model as usual.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

FILE = "oof_predictions.jsonl"


def fingerprint(stem: str, alternatives: Sequence[str]) -> str:
    """A short digest of what the model reads from an item (besides its passage)."""
    text = json.dumps([stem, list(alternatives)], ensure_ascii=False)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Entry:
    logits: list[float]
    fold: int | None
    fingerprint: str


@dataclass
class OutOfFold:
    """Out-of-fold logits by (source:id, format)."""

    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, question, fmt: str) -> Entry | None:
        """The entry for this very item in this format, or None."""
        entry = self.entries.get((f"{question.source}:{question.id}", fmt))
        if entry is None or entry.fingerprint != fingerprint(question.stem, question.alternatives):
            return None
        if len(entry.logits) != len(question.alternatives):
            return None
        return entry


    def trained_on(self, question, fmt: str) -> bool:
        """Whether the model trained on an item with this source and id in this format, edited
        since or not (a what-if scratch copy keeps the id of the item it copies)."""
        source = getattr(question, "source", None)
        return source is not None and (f"{source}:{question.id}", fmt) in self.entries


def load(directory: str | Path) -> OutOfFold | None:
    """The directory's out-of-fold predictions; None when it has none.

    Rows without a fingerprint cannot be tied to an item's content and are skipped.  A
    damaged file (cut short, not UTF-8, a field of the wrong type) is a ModelError that
    names the file, the line and the field: serving the model's own in-sample output
    instead would be silently wrong.
    """
    from desktop.domain.errors import ModelError

    path = Path(directory) / FILE
    if not path.is_file():
        return None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the out-of-fold predictions ({exc.strerror or exc})") from None
    oof = OutOfFold()
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ModelError(f"{path}, line {n}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except ValueError as exc:
            raise ModelError(f"{path}, line {n}: not a JSON object ({exc}); the file is damaged or cut short") from None
        if not isinstance(row, dict):
            raise ModelError(f"{path}, line {n}: not a JSON object")
        if not row.get("fingerprint"):
            continue
        entry_id, fmt, digest, logits, fold = (row.get(k) for k in ("id", "format", "fingerprint", "logits", "fold"))
        for name, value in (("id", entry_id), ("format", fmt), ("fingerprint", digest)):
            if not isinstance(value, str):
                raise ModelError(f"{path}, line {n}, field {name}: must be a string, got {value!r:.60}")
        if not (isinstance(logits, list) and logits and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in logits)):
            raise ModelError(f"{path}, line {n}, field logits: must be a list of finite numbers, got {logits!r:.60}")
        if fold is not None and (isinstance(fold, bool) or not isinstance(fold, int)):
            raise ModelError(f"{path}, line {n}, field fold: must be an integer or null, got {fold!r:.60}")
        oof.entries[(entry_id, fmt)] = Entry([float(x) for x in logits], fold, digest)
    return oof
