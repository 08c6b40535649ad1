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

    Rows without a fingerprint cannot be tied to an item's content and are skipped.
    """
    path = Path(directory) / FILE
    if not path.is_file():
        return None
    oof = OutOfFold()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            if not row.get("fingerprint"):
                continue
            oof.entries[(row["id"], row["format"])] = Entry(
                [float(x) for x in row["logits"]], row.get("fold"), row["fingerprint"])
    return oof
