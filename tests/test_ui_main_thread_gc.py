"""Cyclic garbage holding Qt objects is collected on the GUI thread, never on a worker.

A PySide6 object collected on a worker thread runs QObject::~QObject there, which took
Qt's connection lock and then waited for the GIL held by the GUI thread waiting for
that lock: the suite froze in MainWindow._saved once (2026-11-26).
"""
from __future__ import annotations

import gc
import threading
import weakref

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QObject  # noqa: E402

from desktop.ui import main_thread_gc  # noqa: E402


class Node(QObject):
    pass


def test_cycles_made_on_a_worker_are_collected_on_the_gui_thread(qtbot):
    collector = main_thread_gc.install()
    assert collector is main_thread_gc.install()  # one per application
    assert not gc.isenabled()
    destroyed_on: list[str] = []
    refs = []

    def make_garbage():
        # far past the threshold of generation 0 (at least CPython's default 700: a threshold of 0
        # set by some library before the collector was installed would make no garbage at all)
        for _ in range(3 * max(collector.thresholds[0], 700)):
            a, b = Node(), []
            b.append(b)
            a.cycle = (a, b)  # a PySide6 object inside a reference cycle
            # the callback runs in whichever thread frees the object
            refs.append(weakref.ref(a, lambda _: destroyed_on.append(threading.current_thread().name)))

    worker = threading.Thread(target=make_garbage, name="worker")
    worker.start()
    worker.join()
    assert destroyed_on == []  # the worker allocated past every threshold, but collected nothing
    # what matters is where the cycles die, not which collection freed them: in the full suite
    # another test's gc.collect() on the GUI thread may get there before the collector's timer
    qtbot.waitUntil(lambda: len(destroyed_on) > 0, timeout=20000)  # a loaded machine delays timers
    print(f'collector thresholds {collector.thresholds}, gc counts {gc.get_count()}')
    assert set(destroyed_on) == {threading.main_thread().name}
