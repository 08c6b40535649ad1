"""PySide6 6.12.0 drops a reference to None on every void call; the workbench must outlive that."""
from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CALLS = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
n = sys.getrefcount(None) + 1000  # more void calls than None has references before the guard
{guard}
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
label = QLabel()
for _ in range(n):
    label.setText("x")
print("alive", n)
"""


def _run(guard: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CALLS.format(guard=guard)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))


def test_many_void_qt_calls_survive_with_the_workbench_loaded():
    assert "alive" in _run("import desktop.ui").stdout

