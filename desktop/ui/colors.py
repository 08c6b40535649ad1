"""The colours of the workbench: one per alternative, one per role, one per acceptability.

Alternatives use the Okabe–Ito palette so that the bases of A–D stay
distinguishable for colour-blind annotators and in greyscale prints.
"""
from __future__ import annotations

from PySide6.QtGui import QColor

# Okabe–Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue; vermillion
# rather than orange for B so that it never reads as the yellow of evidence.
_ALTERNATIVE_HEX = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C6D00", "#555555")

EVIDENCE_HEX = "#FFE866"
REQUIRED_HEX = "#7B8794"
MODEL_HEX = "#C0392B"
SELECTED_HEX = "#202020"

# Acceptability classes of EMBRACE: acceptable, mainly, partially, unacceptable.
ACCEPTABILITY_HEX = {
    "acceptable": "#2E9E44",
    "mainly acceptable": "#D4B106",
    "partially acceptable": "#E07B00",
    "unacceptable": "#C62828",
}
_TIER_HEX = {"none": "#2E9E44", "mild": "#D4B106", "moderate": "#E07B00", "severe": "#C62828"}


def alternative_color(index: int, alpha: int = 255) -> QColor:
    color = QColor(_ALTERNATIVE_HEX[index % len(_ALTERNATIVE_HEX)])
    color.setAlpha(alpha)
    return color


def alternative_hex(index: int) -> str:
    return _ALTERNATIVE_HEX[index % len(_ALTERNATIVE_HEX)]


def color(hex_: str, alpha: int = 255) -> QColor:
    c = QColor(hex_)
    c.setAlpha(alpha)
    return c


def acceptability_hex(name: str | None) -> str:
    """Colour of an acceptability class or tier name; grey when unknown."""
    if not name:
        return "#777777"
    key = str(name).strip().lower()
    return ACCEPTABILITY_HEX.get(key) or _TIER_HEX.get(key) or "#777777"
