"""Fitting the window to the screen it opens on (a 1366×768 laptop as well as a large monitor)."""
from __future__ import annotations


def initial_size(window, width: int, height: int) -> tuple[int, int]:
    """`width`×`height`, shrunk to the screen's available area (less the frame) when smaller."""
    screen = window.screen()
    if screen is None:
        return width, height
    area = screen.availableGeometry()
    return min(width, max(800, area.width() - 16)), min(height, max(560, area.height() - 40))
