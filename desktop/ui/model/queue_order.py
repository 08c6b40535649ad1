"""What the model's thread does next (plain Python, no Qt, no SQL): the open item first, then
the items ahead of it in the navigator's order and filter.

The window tells the queue which item is open (with its question and passage, already
loaded) and which items come next (ids only, read by the model's thread through its own
connection).  Each item has up to three stages (`model_stages`: probabilities, evidence,
give-away words); the next task is the one of least rank

    rank = distance from the open item + stage (0 probabilities, 1 evidence, 2 give-away words)

ties to the nearer item: so the probabilities run one item ahead of the evidence and two
ahead of the give-away words, and the open item always comes first.  The open item's
give-away words are computed only while its Why? tab is shown (then right after its
probabilities).  `done` remembers every (item, stage) done or found stored with this model,
so nothing is scored twice however often the plan changes.

All methods are called with the worker's lock held; the stages run outside it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from desktop.ui.model.stages import EVIDENCE, GIVEAWAY, PROBABILITIES

STAGE_RANK = {PROBABILITIES: 0, EVIDENCE: 1, GIVEAWAY: 2}
WHY_RANK = 0.5  # the open item's give-away words while the Why? tab is shown: after its probabilities


@dataclass
class Target:
    """One item the queue works for."""

    item_id: str
    question: Any = None  # desktop.domain.model.Question (None until read)
    passage_text: str = ""
    need: list[str] | None = None  # stages still to do, as found when read (None: not worked out yet)
    scores: Any = None  # stage 1's QuestionScores (kept for stage 2)
    rescore: bool = False  # Rescore this item: stored rows are not reused

    @property
    def loaded(self) -> bool:
        return self.question is not None and self.need is not None


@dataclass
class Task:
    target: Target
    stage: str
    distance: int


class ModelQueue:
    def __init__(self):
        self.open: Target | None = None
        self.ahead: list[str] = []  # item ids after the open one, in the navigator's order
        self.targets: dict[str, Target] = {}  # read items of the plan
        self.done: set[tuple[str, str]] = set()  # (item, stage) done or found stored
        self.why: str | None = None  # the item whose Why? tab is shown
        self.paused = False  # Model → Pause the model
        self.hold = False  # the window is busy (an import, a report, the facts)
        self.running: tuple[str, str] | None = None  # (item, stage) in the model's hands now
        self.computed: list[tuple[str, str]] = []  # every (item, stage) computed: tests, benchmark
        self.failed: set[str] = set()  # items whose scoring failed: not tried again in this plan

    # ---- the window's requests ---------------------------------------------------------------
    def set_open(self, target: Target) -> bool:
        """A new open item (True) or fresher data for the same one (False)."""
        same = self.open is not None and self.open.item_id == target.item_id
        if same and not target.rescore:
            old = self.open
            old.question, old.passage_text = target.question, target.passage_text
            return False
        if target.rescore:
            self.done = {d for d in self.done if d[0] != target.item_id}
            self.failed.discard(target.item_id)
        before = self.targets.get(target.item_id)
        if before is not None and before.scores is not None and not target.rescore:
            target.scores = before.scores  # stage 1 done ahead: the evidence goes on from it
        self.open = target
        self.ahead = [i for i in self.ahead if i != target.item_id]  # until the window plans again
        return True

    def clear_open(self) -> None:
        self.open = None

    def set_ahead(self, item_ids: list[str]) -> None:
        opened = self.open.item_id if self.open else None
        self.ahead = [i for i in dict.fromkeys(item_ids) if i != opened]
        keep = set(self.ahead)
        self.targets = {k: v for k, v in self.targets.items() if k in keep}

    def wanted(self) -> set[str]:
        """Items the plan works for now: a task running for another is cancelled."""
        return ({self.open.item_id} if self.open else set()) | set(self.ahead)

    def to_read(self) -> list[str]:
        return [i for i in self.ahead if i not in self.targets]

    def add_read(self, targets: list[Target], asked: list[str]) -> None:
        wanted = set(self.ahead)
        for t in targets:
            if t.item_id in wanted:
                self.targets[t.item_id] = t
        found = {t.item_id for t in targets}
        for i in asked:  # not read (gone from the database, or the read failed): nothing to do for it now
            if i in wanted and i not in found:
                self.targets[i] = Target(i, question=None, need=[])

    # ---- what next -----------------------------------------------------------------------------
    def _stages(self, t: Target, distance: int) -> list[str]:
        if t.item_id in self.failed or not t.loaded:
            return []
        out = [s for s in t.need if (t.item_id, s) not in self.done]
        if distance == 0 and self.why != t.item_id:
            out = [s for s in out if s != GIVEAWAY]
        return out

    def tasks(self) -> list[Task]:
        out = []
        items = ([(self.open, 0)] if self.open else []) + [
            (self.targets[i], k + 1) for k, i in enumerate(self.ahead) if i in self.targets]
        for t, distance in items:
            for s in self._stages(t, distance):
                out.append(Task(t, s, distance))

        def rank(task: Task):
            if task.distance == 0 and task.stage == GIVEAWAY:
                return (WHY_RANK, 0)
            return (task.distance + STAGE_RANK[task.stage], task.distance)
        return sorted(out, key=rank)

    def next_task(self) -> Task | None:
        if self.paused or self.hold:
            return None
        tasks = self.tasks()
        return tasks[0] if tasks else None

    def open_task(self) -> Task | None:
        """The open item's next stage (before the items ahead are read; also while the window
        is busy: the annotator is looking at it)."""
        tasks = [t for t in self.tasks() if t.distance == 0]
        return None if self.paused or not tasks else tasks[0]

    def finished(self, item_id: str, stage: str) -> None:
        self.done.add((item_id, stage))

    # ---- what it says --------------------------------------------------------------------------
    def ready_ahead(self) -> int:
        """How many of the next items, one after another, have their probabilities."""
        n = 0
        for i in self.ahead:
            t = self.targets.get(i)
            if t is None:
                break
            if (t.loaded and PROBABILITIES in t.need or not t.loaded) and (i, PROBABILITIES) not in self.done:
                break
            n += 1
        return n

    def open_stages_left(self) -> list[str] | None:
        """The open item's stages still to do; None until the model's thread has looked."""
        if self.open is None:
            return []
        return None if self.open.need is None else self._stages(self.open, 0)

    def snapshot(self) -> dict:
        return {"paused": self.paused, "hold": self.hold, "running": self.running,
                "open": self.open.item_id if self.open else None, "open_left": self.open_stages_left(),
                "ahead": len(self.ahead), "ready": self.ready_ahead(),
                "busy": bool(self.tasks()) or bool(self.to_read())}


def minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds / 10) * 10):.0f} s"
    return f"{round(seconds / 60):.0f} min"


def status_text(snap: dict, batch: dict | None = None, loaded: bool = True, error: str | None = None) -> str:
    """The status bar's few words on the model: "model: 3 items ahead", "scoring 12 of 40 ·
    about 4 min left", "paused: window busy"."""
    if error:
        return "model: none"
    if not loaded:
        return "model: loading…"
    if snap.get("paused"):
        return "model: paused"
    if snap.get("hold") and (snap.get("busy") or batch):
        return "paused: window busy"
    if batch:
        done, total, left = batch["done"], batch["total"], batch.get("seconds_left")
        text = f"scoring {done} of {total}"
        return text + (f" · about {minutes(left)} left" if left is not None else "")
    running = snap.get("running")
    if running is not None and running[0] == snap.get("open"):
        return {PROBABILITIES: "model: scoring this item", EVIDENCE: "model: evidence…",
                GIVEAWAY: "model: give-away words…"}.get(running[1], "model: working")
    if snap.get("ahead"):
        n = snap.get("ready", 0)
        return f"model: {n} item{'' if n == 1 else 's'} ahead"
    return "model: ready"
