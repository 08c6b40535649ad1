"""Shared test set-up: Qt runs without a display (pytest-qt tests of desktop/ui), and a window
opened without a model of its own gets the tiny test model, not the shipped MPNet reader (one
to two seconds a question on two cores, scored in the background of every window test).
Tests of the shipped model name models/default themselves (tests/test_shipped_model.py)."""
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MCQLENS_MODEL", str(Path(__file__).resolve().parent / "data" / "tiny_model"))
