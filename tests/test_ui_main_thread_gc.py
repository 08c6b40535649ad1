"""Cyclic garbage holding Qt objects is collected on the GUI thread, never on a worker.

A PySide6 object collected on a worker thread runs QObject::~QObject there, which took
Qt's connection lock and then waited for the GIL held by the GUI thread waiting for
that lock: the suite froze in MainWindow._saved once (2026-11-26).

The check runs in a fresh interpreter: inside the whole suite, state other tests leave in
the one QApplication and in the collector (its counts, a library's gc settings) made the
timer-driven collection untestable, while a program meets the collector fresh.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r'''
import gc, json, threading, time, weakref
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication
from desktop.ui.kit import main_thread_gc

class Node(QObject):
    pass

app = QApplication([])
collector = main_thread_gc.install()
out = {"same": collector is main_thread_gc.install(), "enabled": gc.isenabled()}
destroyed_on, refs = [], []

def make_garbage():
    for _ in range(3 * max(collector.thresholds[0], 700)):  # far past generation 0's threshold
        a, b = Node(), []
        b.append(b)
        a.cycle = (a, b)  # a PySide6 object inside a reference cycle
        # the callback runs in whichever thread frees the object
        refs.append(weakref.ref(a, lambda _: destroyed_on.append(threading.current_thread().name)))

worker = threading.Thread(target=make_garbage, name="worker")
worker.start()
worker.join()
out["after_worker"] = list(destroyed_on)  # allocated past every threshold, collected nothing
deadline = time.monotonic() + 30
while not destroyed_on and time.monotonic() < deadline:
    app.processEvents()  # the collector's timer fires here, on the GUI thread
    time.sleep(0.02)
out["collections"] = collector.collections
out["threads"] = sorted(set(destroyed_on))
print(json.dumps(out))
'''


def test_cycles_made_on_a_worker_are_collected_on_the_gui_thread():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["same"] and not out["enabled"]  # one collector per application; automatic gc off
    assert out["after_worker"] == []  # the worker allocated past every threshold, but collected nothing
    assert out["collections"] > 0
    assert out["threads"] == ["MainThread"]
