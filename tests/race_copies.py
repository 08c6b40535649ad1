"""A large RACE file made of real passages: `copies` copies of the first `n_files` RACE test/high
passages, each copy with its own ids (the import and streaming tests need more questions than one
file holds, with the texts of real items)."""
from __future__ import annotations

import json
from pathlib import Path

RACE_TEST_HIGH = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "race" / "test" / "high"


def race_jsonl(path: Path, copies: int, n_files: int = 40) -> int:
    """Writes the copies to `path` as JSON lines; returns the number of questions written."""
    records = [json.loads(f.read_text(encoding="utf-8")) for f in sorted(RACE_TEST_HIGH.iterdir())[:n_files]]
    questions = 0
    with open(path, "w", encoding="utf-8") as fh:
        for c in range(copies):
            for rec in records:
                fh.write(json.dumps({**rec, "id": f"copy{c}-{rec['id']}"}) + "\n")
                questions += len(rec["questions"])
    return questions
