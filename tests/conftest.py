"""Shared test set-up: Qt runs without a display (pytest-qt tests of desktop/ui)."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
