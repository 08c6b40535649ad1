"""The data files of a folder, in the order every reader takes them."""
from __future__ import annotations

import os
from pathlib import Path

EXTENSIONS = (".json", ".jsonl", ".txt", ".xml", ".csv")


def walk(folder: str | os.PathLike) -> list[Path]:
    """Data files under a folder, sorted; links that lead outside the folder are never followed."""
    root = Path(folder).resolve()
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            f = Path(dirpath) / name
            if name.startswith(".") or f.suffix.lower() not in EXTENSIONS:
                continue
            # folders are walked without following links, so only the file itself can be one
            if f.is_symlink() and root not in f.resolve().parents:
                continue
            if f.is_file():
                out.append(f)
    return out
