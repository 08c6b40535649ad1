"""Which model: the models shipped with the product, listed by name, and the one door that
decides the model directory (`locate_model`: the one given → the one remembered → the shipped
default), so the window, `mcqlens score`, `explain` and `expmrc predict` decide it alike.

The shipped models are the folders of `models/` that hold a `card.json`: `default` (the fast
reader every command uses unless told otherwise) first, then the others by name (`accurate`:
the same weights read at 512 tokens).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

MODELS = Path(__file__).resolve().parents[1] / "models"
DEFAULT = MODELS / "default"
ENV = "MCQLENS_MODEL"  # a model directory for every command and window of this process's children


@dataclass(frozen=True)
class Entry:
    name: str
    id: str
    directory: Path
    max_length: int
    default: bool


def shipped_models(root: Path | None = None) -> list[Entry]:
    """The shipped model directories, the default first; a folder whose card cannot be read is left out."""
    root = Path(root) if root is not None else MODELS
    out = []
    for d in sorted(p for p in root.iterdir() if (p / "card.json").is_file()) if root.is_dir() else []:
        try:
            card = json.loads((d / "card.json").read_text(encoding="utf-8"))
            out.append(Entry(str(card["name"]), str(card["id"]), d, int(card.get("max_length", 512)),
                             d.name == "default"))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(out, key=lambda e: (not e.default, e.name))


def locate_model(given: str | Path | None = None, remembered: str | Path | None = None) -> Path:
    """The model directory to use: `given` (--model, or the window's choice), else $MCQLENS_MODEL,
    else `remembered` (the window's setting, when it still holds a model), else the shipped default."""
    if given:
        return Path(given)
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    if remembered and (Path(remembered) / "card.json").is_file():
        return Path(remembered)
    return DEFAULT
