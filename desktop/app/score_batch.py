"""Model → Score all… as work of the model's thread (plain Python, no Qt): the window's one
loaded model scores the items in chunks of `mcqlens score`'s own function
(`desktop.app.score.score_store`: the same rows, one transaction per chunk), and between
two chunks — or inside one, through its `cancel` — the open item and the items ahead of it go
first.  Cancel keeps every stored chunk; Score all again goes on from there.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from desktop.app import score
from desktop.domain.words import count


class ScoreBatch:
    def __init__(self, items: list[str] | None, cancel: threading.Event, text: Callable[[str], None],
                 advance: Callable[[int, int], None]):
        self.items = items  # None: every item of the database
        self.cancel = cancel
        self.text = text
        self.advance = advance
        self.todo: list[str] | None = None
        self.pos = 0
        self.run = None  # desktop.app.score.ScoreRun, summed over the chunks
        self.active_s = 0.0  # time spent scoring (not waiting for the open item)
        self.formats: list[str] = []

    def start(self, store, model, formats: list[str]) -> None:
        self.formats = list(formats)
        listed, todo = store.model_outputs.scoring_plan(model.id, self.formats, self.items)
        self.todo = todo
        self.run = score.ScoreRun(model.id, list(formats), questions=len(listed), already=len(listed) - len(todo),
                            to_score=len(todo))
        self.text(f"{self.run.to_score} of {count(self.run.questions, 'question')} to score with "
                  f"{model.card.name}; {self.run.already} already have its scores (kept)")

    @property
    def finished(self) -> bool:
        return self.todo is not None and (self.pos >= len(self.todo) or self.run.cancelled)

    def progress(self) -> dict:
        """{"done", "total", "seconds_left"} in questions, for the status bar."""
        if self.run is None:
            return {"done": 0, "total": len(self.items) if self.items is not None else 0, "seconds_left": None}
        done, total = self.run.scored, self.run.to_score
        left = None
        if done and self.active_s > 0:
            left = (total - done) * self.active_s / done
        return {"done": done, "total": total, "seconds_left": left}

    def step(self, store, model, preempt: Callable[[], bool]) -> bool:
        """Score and store the next chunk; True once the batch is over (done or cancelled).
        `preempt()` turning true (the window wants the model) ends the step early, keeping
        what is stored; the next step goes on from there."""
        if self.todo is None:
            self.start(store, model, self.formats or score.formats_for(None, model.formats))
        if self.cancel.is_set():
            self.run.cancelled = True
            return True
        chunk = self.todo[self.pos:self.pos + score.CHUNK]  # read at call time (a test sets CHUNK)
        if not chunk:
            return True
        pairs_before = self.run.scored * len(self.formats)
        total_pairs = self.run.to_score * len(self.formats)
        t0 = time.perf_counter()
        r = score.score_store(store, model, self.formats, items=chunk, chunk=len(chunk),
                                  cancel=lambda: self.cancel.is_set() or preempt(),
                                  progress=lambda done, _t: self.advance(pairs_before + done, total_pairs))
        self.active_s += time.perf_counter() - t0
        self.run.scored += r.scored
        self.run.stored += r.stored
        if r.scored:
            self.text(f"Scored and stored {self.run.scored} of {count(self.run.to_score, 'question')}…")
        if r.cancelled and self.cancel.is_set():
            self.run.cancelled = True
            return True
        if not r.cancelled:
            self.pos += len(chunk)
        return self.finished
