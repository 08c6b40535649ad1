"""The second process that lints an import's texts (`Worker`, and `serve`, what it runs).

It is a plain Python started with `subprocess` (never `multiprocessing`, whose way of starting
a process imports the caller's main script again): it is handed stems, alternatives and passage
texts through its standard input and sends their suggestions back through its standard output,
one pickled job and one pickled answer at a time, in order.  It is given no file and opens none:
only the importing process's SQLite connection touches the database.  Its standard input closed
(the import done, or the importing process gone) it ends.
"""
from __future__ import annotations

import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from typing import Any, BinaryIO

from . import lint_facts

_LENGTH = struct.Struct("<Q")
# what the second process runs: the package of this very module first on its path
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from desktop.store.lint_worker import serve; serve()"


class WorkerFailed(Exception):
    """The second process could not start, or stopped answering: lint in this one."""


class Worker:
    """The importing process's end: `submit` a job (it is written by a thread of its own, so that
    a full pipe never stops the caller), `result(n)` the answer to the n-th job."""

    def __init__(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        if not sys.executable or getattr(sys, "frozen", False):  # a bundled app's executable is not a Python
            raise WorkerFailed("no Python to start")
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", _BOOT, root], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
        except (OSError, ValueError) as exc:
            raise WorkerFailed(str(exc)) from exc
        self._jobs: queue.Queue = queue.Queue()
        self._sent = 0
        self._answers: dict[int, Any] = {}
        self._received = 0
        self.failed = False  # it stopped answering: no more jobs for it
        self._writer = threading.Thread(target=self._write_jobs, name="lint-worker-input", daemon=True)
        self._writer.start()

    def submit(self, questions: list[tuple[str, list[str], str]], texts: list[str]) -> int:
        self._jobs.put(pickle.dumps((questions, texts), pickle.HIGHEST_PROTOCOL))
        self._sent += 1
        return self._sent - 1

    def result(self, n: int) -> tuple[list[str], list[str]]:
        """The answer to job `n` (the answers before it are kept for their own callers)."""
        while n not in self._answers:
            if self._received >= self._sent:
                raise WorkerFailed(f"job {n} was never sent")
            try:
                self._answers[self._received] = pickle.loads(read_frame(self._proc.stdout))
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                self.failed = True
                raise WorkerFailed(str(exc)) from exc
            self._received += 1
        return self._answers.pop(n)

    def close(self, finished: bool = True) -> None:
        """End the second process: after its last answer (`finished`), or at once."""
        self._jobs.put(None)  # its input closed, it ends once its answers are out
        if not finished:
            self._proc.kill()
        try:
            self._proc.stdout.close()  # an answer no one waits for ends it too
        except OSError:
            pass
        self._writer.join()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def _write_jobs(self) -> None:
        stdin = self._proc.stdin
        try:
            while (job := self._jobs.get()) is not None:
                stdin.write(_LENGTH.pack(len(job)))
                stdin.write(job)
                stdin.flush()
        except OSError:  # the process is gone: `result` says so
            pass
        finally:
            try:
                stdin.close()
            except OSError:
                pass


def read_frame(stream: BinaryIO) -> bytes:
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError("the stream ended")
    (n,) = _LENGTH.unpack(head)
    data = stream.read(n)
    if len(data) < n:
        raise EOFError("the stream ended inside a frame")
    return data


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """In the second process: lint each job (questions as (stem, alternatives, passage text),
    passage texts) until the input ends; answer (question lints, passage lints)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the importing process's to handle
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    while True:
        try:
            questions, texts = pickle.loads(read_frame(stdin))
        except EOFError:
            return
        answer = pickle.dumps((lint_facts.question_lints(questions), lint_facts.passage_lints(texts)),
                              pickle.HIGHEST_PROTOCOL)
        stdout.write(_LENGTH.pack(len(answer)))
        stdout.write(answer)
        stdout.flush()
