"""The linter's suggestions of an import's next part, found in a second process while this one
checks and writes the part before.

A large import spends as long linting its questions as reading, checking and writing them
(500,000 generated RACE questions: about 18 of 40 s of CPU).  Where there is a second processor
the lint runs beside the rest: when a part is read, the stems, alternatives and passage texts
of its questions and passages not yet stored are handed to a second process, which sends back
their suggestions (`lint_facts.question_lints`, `passage_lints`); this process meanwhile checks
and writes the part before.  The second process is given texts only and never opens the
database: the rows are written here, by the one connection, with their lint, as before.

The suggestions are looked up by the texts they were found for, and what the second process did
not give (a question it was not sent, a process that could not start or died) is linted here:
the stored facts are the same either way.  Used only where it can help: two processors or more
(`processors`) and a dataset of at least `FROM_QUESTIONS` questions.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from desktop.domain.model import Passage

from . import imports, lint_facts
from .lint_worker import Worker, WorkerFailed

# The smallest dataset linted beside: below it, starting a process costs more than it saves
FROM_QUESTIONS = 40_000


def processors() -> int:
    """Processors this process may run on (a 1-core machine lints in this process)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this system
        return os.cpu_count() or 1


class LintAhead:
    """The second process of one import, started when a dataset is worth it; a context manager
    that ends it (at once when the import fails)."""

    def __init__(self):
        self._worker: Worker | None = None
        self._failed = processors() < 2

    def __enter__(self) -> "LintAhead":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._worker is not None:
            self._worker.close(finished=exc_type is None)
            self._worker = None

    def worth(self, passages) -> bool:
        """Whether a dataset's passages (a list, or a file read again) are linted beside."""
        n = passages.questions if hasattr(passages, "questions") else (
            sum(len(p.questions) for p in passages) if isinstance(passages, list) else 0)
        return not self._failed and n >= FROM_QUESTIONS

    def parts(self, conn, parts: Iterable[list[Passage]]) -> Iterator[tuple[list[Passage], object]]:
        """(part, its lints) for each part: the next part is read and handed over before a part is
        returned, so that its lint goes on while the caller checks and writes this one."""
        waiting = None
        for part in parts:
            found = self._submit(conn, part)
            if waiting is not None:
                yield waiting
            waiting = (part, found)
        if waiting is not None:
            yield waiting

    def _submit(self, conn, part: list[Passage]):
        if self._worker is not None and self._worker.failed:
            self._failed = True
        if self._failed:
            return lint_facts
        # what is stored already is skipped or refused by the plan, never linted
        stored_q = {r[0] for r in imports.lookup(conn, "SELECT id FROM questions WHERE id IN ({})",
                                                 [q.id for p in part for q in p.questions if isinstance(q.id, str)])}
        stored_p = {r[0] for r in imports.lookup(conn, "SELECT id FROM passages WHERE id IN ({})",
                                                 [p.id for p in part if isinstance(p.id, str)])}
        questions = [(q.stem, q.alternatives, p.text) for p in part for q in p.questions if q.id not in stored_q]
        texts = [p.text for p in part if p.id not in stored_p]
        try:
            if self._worker is None:
                self._worker = Worker()
            return Found(self._worker, self._worker.submit(questions, texts), questions, texts)
        except WorkerFailed:  # no second process here (a sandbox, a limit): lint in this one
            self._failed = True
            return lint_facts


class Found:
    """One part's suggestions from the second process: `question_lints` and `passage_lints` as
    `lint_facts` has them, looked up by their texts (what is missing is linted here)."""

    def __init__(self, worker: Worker, job: int, questions: list[tuple], texts: list[str]):
        self._worker, self._job, self._sent = worker, job, (questions, texts)
        self._questions: dict | None = None
        self._texts: dict = {}

    def _wait(self) -> None:
        if self._questions is not None:
            return
        self._questions = {}
        questions, texts = self._sent
        self._sent = None
        try:
            q_lints, p_lints = self._worker.result(self._job)
        except WorkerFailed:  # the second process stopped: everything is linted here
            return
        self._questions = {(stem, tuple(alts), text): lint for (stem, alts, text), lint in zip(questions, q_lints)}
        self._texts = dict(zip(texts, p_lints))

    def question_lints(self, items: list[tuple[str, list[str], str]]) -> list[str]:
        self._wait()
        out = [self._questions.get((stem, tuple(alts), text)) for stem, alts, text in items]
        return _filled(out, items, lint_facts.question_lints)

    def passage_lints(self, texts: list[str]) -> list[str]:
        self._wait()
        return _filled([self._texts.get(t) for t in texts], texts, lint_facts.passage_lints)


def _filled(out: list, items: list, lint) -> list[str]:
    missing = [i for i, x in enumerate(out) if x is None]
    if missing:
        for i, x in zip(missing, lint([items[i] for i in missing])):
            out[i] = x
    return out
