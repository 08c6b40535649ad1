"""Qt widgets and Qt models of the workbench (the only package that imports PySide6)."""
from desktop.ui.kit.qt_guard import guard_none

guard_none()
