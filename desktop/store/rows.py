"""Light result records the store hands out (navigator rows, history rows, import summaries)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop.domain.words import count


@dataclass
class ItemRow:
    """One question as the navigator lists it: enough to draw a row, nothing heavy.

    `status` is the annotator's own (the one `items(annotator=...)` was asked for, by
    default the store's), `gold_status` the `gold` layer's, `n_done` how many annotators
    (gold not counted) have marked the item done."""

    item_id: str
    passage_id: str
    source: str
    index: int
    stem: str
    status: str
    n_evidence: int
    n_bases: int
    n_problems: int
    has_assessment: bool
    answerability: str | None
    gold_status: str = "untouched"
    n_done: int = 0
    rowid: int = 0  # the question's SQLite rowid: the navigator's cheap handle

    @property
    def has_evidence(self) -> bool:
        return self.n_evidence > 0

    @property
    def has_bases(self) -> bool:
        return self.n_bases > 0


@dataclass
class HistoryRow:
    """One entry of the audit trail.

    `kind` is "change" (an edit), "undo" / "redo" (which point at the change they
    reverted or re-applied through `ref`), "import" or "predictions".  `undone` is
    True while a change is currently reverted.
    """

    id: int
    annotator: str
    ts: str
    item: str | None
    field: str
    before: Any
    after: Any
    kind: str = "change"
    ref: int | None = None
    undone: bool = False


@dataclass
class ImportResult:
    """What one `import_datasets` call added; all zero when the file was already there."""

    file: str | None = None
    sha256: str | None = None
    datasets: int = 0
    passages: int = 0
    questions: int = 0
    spans: int = 0
    assessments: int = 0
    problems: int = 0
    comments: int = 0
    predictions: int = 0
    unchanged_questions: int = 0  # already stored with the same content
    already_imported: bool = False  # the same file (same sha256) was imported before
    history_id: int | None = None
    per_source: dict[str, int] = field(default_factory=dict)  # new questions per source

    _already: list = field(default_factory=list, repr=False, compare=False)

    def add(self, other: "ImportResult") -> None:
        """Sum another file's result into this one (a folder: one result for all its files)."""
        for name in ("datasets", "passages", "questions", "spans", "assessments", "problems", "comments",
                     "predictions", "unchanged_questions"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for src, n in other.per_source.items():
            self.per_source[src] = self.per_source.get(src, 0) + n
        self._already.append(other.already_imported)

    @property
    def changed(self) -> bool:
        return bool(self.passages or self.questions or self.spans or self.assessments
                    or self.problems or self.comments or self.predictions or self.datasets)

    def summary(self) -> str:
        if self.already_imported:
            return f"{self.file}: already imported, nothing added"
        if not self.changed:
            return f"{self.file}: nothing new ({count(self.unchanged_questions, 'question')} already stored)"
        parts = [count(self.passages, "passage"), count(self.questions, "question"), count(self.spans, "span"),
                 count(self.assessments, "assessment"), count(self.problems, "problem"),
                 count(self.comments, "comment")]
        if self.predictions:
            parts.append(count(self.predictions, "prediction"))
        if self.unchanged_questions:
            parts.append(f"{count(self.unchanged_questions, 'question')} already stored")
        return f"{self.file or 'datasets'}: added " + ", ".join(parts)
