"""The statistics of the Kirsch–Mosenthal totals (n, mean, median, every mode) and the one way a
mode is printed (`mode_text`): the terminal, the report's page and its Fig. 8 say the same."""
from __future__ import annotations

import statistics

SEED_STATS = {"n": 1181, "mean": 13.09, "median": 13, "mode": 14}


def total_stats(totals: list[float]) -> dict:
    """n, mean, median and the modes of the totals.  `modes`: every most frequent total,
    ascending; `mode`: the smallest of them (a number for plots and JSON); show them with
    `mode_text`, so a tie reads the same everywhere."""
    if not totals:
        return {"n": 0, "mean": float("nan"), "median": float("nan"), "mode": float("nan"), "modes": []}
    modes = sorted(statistics.multimode(totals))
    return {"n": len(totals), "mean": statistics.mean(totals), "median": statistics.median(totals),
            "mode": modes[0], "modes": modes, "min": min(totals), "max": max(totals)}


def mode_text(stats: dict) -> str:
    """The mode as the terminal, the page and Fig. 8 print it: "12", or "12, 13" for a tie."""
    modes = stats.get("modes") or []
    return ", ".join(f"{m:g}" for m in modes) if modes else "–"
