"""Shared test set-up: Qt runs without a display (pytest-qt tests of desktop/ui), and a window
opened without a model of its own gets the tiny test model, not the shipped MPNet reader (one
to two seconds a question on two cores, scored in the background of every window test).
Tests of the shipped model name models/default themselves (tests/test_shipped_model.py).
No window scores ahead of the open item unless its test says so (MCQLENS_SCORE_AHEAD).
The suite runs in two processes (pyproject's addopts: pytest-xdist, a file's tests together);
each process has its own settings file."""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MCQLENS_MODEL", str(Path(__file__).resolve().parent / "data" / "tiny_model"))
# The window's model scores no items ahead of the open one unless a test asks for it
# (tests/test_ui_model_queue.py does): the other window tests count what the model computed
# for the items they open, and two cores shared by the suite need no background scoring.
os.environ.setdefault("MCQLENS_SCORE_AHEAD", "0")
# Two tests run at once (one per xdist worker): the window's QSettings (recent databases, the
# model folder, the annotator's name) are this process's own, never another test's nor the
# user's.  The tiny model's derived CPU graph ($XDG_CACHE_HOME/mcqlens) stays shared: every
# process writes it through a file of its own renamed into place
# (tests/test_inference_concurrent_load.py), and a cold cache in each worker slowed the first
# load enough to reorder the window's model queue in timing-bound tests.
_OWN = Path(tempfile.mkdtemp(prefix="mcqlens-tests-"))
os.environ["MCQLENS_SETTINGS"] = str(_OWN / "settings.ini")


_EXIT = pytest.StashKey[int]()


# PySide6 6.12 can abort the interpreter while it is being torn down ("Fatal Python error:
# bool_dealloc ... Garbage-collecting", exit 134) after every test has passed and pytest has
# printed its summary — seen when Qt windows and onnxruntime sessions were both made in one run.
# The tests' verdict is pytest's exit status, so once pytest is completely done (its summary
# written, its cache saved) the process ends with that status without the interpreter's final
# garbage collection.
def pytest_sessionfinish(session, exitstatus):
    session.config.stash[_EXIT] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    shutil.rmtree(_OWN, ignore_errors=True)
    status = config.stash.get(_EXIT, None)
    # an xdist worker ends when its controller says so, after its last report is sent: ending it
    # here could cut that report off
    if status is None or "PySide6" not in sys.modules or hasattr(config, "workerinput"):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
