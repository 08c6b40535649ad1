"""Logit files written by `models.training.train` (one JSON row per question and format) as arrays.

Questions have 3 (DREAM) to 4 alternatives; padding options get −inf logits, which
`inference.metrics` handles.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from inference.metrics import fit_temperature


def read_rows(path: str | Path, part: str | None = None) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                if part is None or row.get("part") == part:
                    rows.append(row)
    return rows


def arrays(rows: list[dict]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(ids, logits [n, max options] with −inf padding, keys)."""
    width = max((len(r["logits"]) for r in rows), default=0)
    z = np.full((len(rows), width), -np.inf)
    for i, r in enumerate(rows):
        z[i, : len(r["logits"])] = r["logits"]
    return [r["id"] for r in rows], z, np.array([r["key"] for r in rows])


def by_format(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["format"], []).append(r)
    return out


def fit_temperatures(rows: list[dict], formats) -> dict[str, float]:
    """One temperature per format by the seed's rule (accuracy = mean maximum probability)."""
    out = {}
    for fmt, fr in by_format(rows).items():
        if fmt in formats:
            _, z, keys = arrays(fr)
            out[fmt] = round(float(fit_temperature(z, keys)), 4)
    return out
