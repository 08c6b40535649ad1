"""How docs/models.md writes a figure in a table cell: percentages, F1, intervals, sizes, yes/no."""
from __future__ import annotations


def f1(v) -> str:
    """An F1 of the official ExpMRC scorer (already in %) at one decimal, as every other figure here."""
    return "–" if v is None else f"{float(v):.1f}"


def pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}"


def cell(s: dict) -> str:
    return f"{pct(s['accuracy'])} [{pct(s['ci95'][0])}, {pct(s['ci95'][1])}]"


def size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def yes(ok: bool | None) -> str:
    return "–" if ok is None else ("yes" if ok else "**no**")


def agree(m: dict, fmt: str, key: str = "agreement") -> str:
    """A recipe's agreement (%) or mean largest logit difference in one format, "–" where that
    format was not measured (a recipe for a graph that reads one format is checked in that one)."""
    if fmt not in m:
        return "–"
    return f"{pct(m[fmt][key], 2)}%" if key == "agreement" else f"{m[fmt][key]:.4f}"
