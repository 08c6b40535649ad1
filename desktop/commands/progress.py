"""Progress of a long command on stderr: a tqdm bar on a terminal, else a line every tenth.

    with Progress(total, "questions") as step:
        inference.score(..., progress=step)    # step(done, total)

stdout stays for the command's result; a log file (stderr not a terminal) gets plain
lines instead of a bar's carriage returns.
"""
from __future__ import annotations

import sys


class Progress:
    def __init__(self, total: int, unit: str, quiet: bool = False, stream=None, label: str = ""):
        """`total` may be 0 when only the first call knows it (`step(done, total)`)."""
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
            print(f"{prefix}{done}/{self.total} {self.unit}", file=self.stream, flush=True)
            # the next line a tenth further on, and the last one once
            self._next_line = self.total + 1 if done >= self.total else min(done + max(1, self.total // 10),
                                                                              self.total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
