"""Progress of a long command on stderr: a tqdm bar on a terminal, else a line every few seconds.

    with Progress(total, "questions", label="scoring") as step:
        inference.score(..., progress=step)    # step(done, total)

stdout stays for the command's result.  When stderr is not a terminal (a log file, a pipe,
a scheduler) a bar's carriage returns would be one endless line, and a command that runs
for minutes must still say that it is alive: it writes a plain line (`scoring: 120/561
questions`) once `MCQLENS_PROGRESS_SECONDS` (default 5) have passed since the command
started or since its previous line, and a last line when the work is done.  A command done
before that prints nothing, so a short run's stderr holds only what it has to say.  Every
long command (import, score, expmrc predict, nota evaluate, explain) reports through this class.
With `eta=True` those lines also say about how long is left (tqdm's bar always does), from
the pace so far.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from tqdm import tqdm

DEFAULT_SECONDS = 5.0


def interval() -> float:
    """Seconds between two progress lines on a stream that is not a terminal."""
    try:
        seconds = float(os.environ.get("MCQLENS_PROGRESS_SECONDS", DEFAULT_SECONDS))
    except ValueError:
        return DEFAULT_SECONDS
    return seconds if seconds >= 0 else DEFAULT_SECONDS


class Progress:
    def __init__(self, total: int, unit: str, quiet: bool = False, stream=None, label: str = "",
                 eta: bool = False):
        """`total` may be 0 when only the first call knows it (`step(done, total)`); unit "%"
        writes `label: 41%`."""
        self.eta = eta
        self._t0: float | None = None
        self._done0 = 0
        self.total = total
        self.unit = unit
        self.label = label
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.done = 0
        self.detail = ""
        self.every = interval()
        self._last = time.monotonic()  # the command's start counts as a line: none before `every`
        self._lines = 0
        self._finished = False
        self._bar = None
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int | float, total: int | None = None, detail: str = "") -> None:
        if total is not None:
            self.total = total
        step, self.done = done - self.done, done
        self.detail = detail
        if self._t0 is None:  # the pace counts from the first call (work already done is not timed)
            self._t0, self._done0 = time.monotonic(), done
        if self.quiet:
            return
        if self._tty:
            if self._bar is None:
                self._bar = tqdm(total=self.total, unit=self.unit, file=self.stream, desc=self.label or None)
            self._bar.total = self.total
            self._bar.update(step)
            if detail:
                self._bar.set_postfix_str(detail, refresh=False)
            return
        if self._finished:
            return
        now = time.monotonic()
        finished = bool(self.total) and done >= self.total
        # a line every `every` seconds, and the last one once: a run that wrote lines says it finished
        if now - self._last >= self.every or (finished and self._lines):
            self._line()
            self._last = now
            self._finished = finished

    def _line(self) -> None:
        prefix = f"{self.label}: " if self.label else ""
        if self.unit == "%":
            figure = f"{int(self.done)}%"
        else:
            figure = f"{int(self.done)}/{self.total} {self.unit}" if self.total else f"{int(self.done)} {self.unit}"
        detail = f" ({self.detail})" if self.detail else ""
        print(f"{prefix}{figure}{self._left(self.done)}{detail}", file=self.stream, flush=True)
        self._lines += 1

    def _left(self, done) -> str:
        """", about 3 min left" once the pace is known; "" when asked not to or finished."""
        if not self.eta or not self.total or done >= self.total or done <= self._done0:
            return ""
        elapsed = time.monotonic() - (self._t0 or time.monotonic())
        left = elapsed / (done - self._done0) * (self.total - done)
        if left < 60:
            return f", about {max(1, round(left))} s left"
        if left < 3600:
            return f", about {round(left / 60)} min left"
        return f", about {left / 3600:.1f} h left"

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def reading(step: Progress, name: str, i: int = 0, n: int = 1):
    """A `formats.read(progress=...)` callback reporting to `step` (unit "%") as file `i` of `n`."""
    def report(done: float, total: int, records: int) -> None:
        step(100 * (i + done / max(total, 1)) / n, detail=f"{name}, {records} records" if records else name)
    return report


class Heartbeat:
    """A line every `interval()` seconds while one long step of a command runs without a count of
    its own (reading a whole database, writing an export, computing a report):
    `export: writing OUT (25 s)`.  Nothing for a step shorter than that, on a terminal or not."""

    def __init__(self, label: str, stream=None, quiet: bool = False):
        self.label, self.stream, self.quiet = label, stream or sys.stderr, quiet
        self.phase = ""
        self._t0 = time.monotonic()
        self._stop = None
        self._thread = None

    def step(self, phase: str) -> None:
        self.phase = phase

    def _beat(self) -> None:
        every = interval()
        while not self._stop.wait(every if every > 0 else 0.01):
            print(f"{self.label}: {self.phase} ({time.monotonic() - self._t0:.0f} s)", file=self.stream, flush=True)

    def __enter__(self) -> "Heartbeat":
        if not self.quiet:
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._beat, name="mcqlens-heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
