"""Progress of a long command on stderr: a tqdm bar on a terminal, else a line every tenth.

    with Progress(total, "questions") as step:
        inference.score(..., progress=step)    # step(done, total)

stdout stays for the command's result; a log file (stderr not a terminal) gets plain
lines instead of a bar's carriage returns.  With `eta=True` those lines also say about how
long is left (tqdm's bar always does), from the pace so far.
"""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, unit: str, quiet: bool = False, stream=None, label: str = "",
                 eta: bool = False):
        """`total` may be 0 when only the first call knows it (`step(done, total)`)."""
        self.eta = eta
        self._t0: float | None = None
        self._done0 = 0
        self.total = total
        self.unit = unit
        self.label = label
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.done = 0
        self._next_line = 0
        self._bar = None

    def __call__(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = total
        step, self.done = done - self.done, done
        if self._t0 is None:  # the pace counts from the first call (work already done is not timed)
            self._t0, self._done0 = time.monotonic(), done
        if self.quiet:
            return
        if self._bar is None and getattr(self.stream, "isatty", lambda: False)():
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, unit=self.unit, file=self.stream, desc=self.label or None)
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.update(step)
        elif done >= self._next_line:
            prefix = f"{self.label}: " if self.label else ""
            print(f"{prefix}{done}/{self.total} {self.unit}{self._left(done)}", file=self.stream, flush=True)
            # the next line a tenth further on, and the last one once
            self._next_line = self.total + 1 if done >= self.total else min(done + max(1, self.total // 10),
                                                                              self.total)

    def _left(self, done: int) -> str:
        """", about 3 min left" once the pace is known; "" when asked not to or finished."""
        if not self.eta or done >= self.total or done <= self._done0:
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
