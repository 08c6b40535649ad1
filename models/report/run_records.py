"""Where the build's run records are (docs/model_runs/) and how they are read: the report and
the frontier of candidates both read them."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RUN = ROOT / "docs" / "model_runs" / "cpu-reader-2026-11-27"
TEACHER_RUN = ROOT / "docs" / "model_runs" / "mpnet-4xh100-2026-11-27"  # the MPNet reader, default until 2026-11-27
EARLIER_MINILM = ROOT / "docs" / "model_runs" / "default"  # the MiniLM default's run (shipped until 2026-11-27)
EARLIER_MPNET = ROOT / "docs" / "model_runs" / "mpnet-4xh100"  # the first MPNet build, whose weights were lost


def read_rows(path: Path) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
