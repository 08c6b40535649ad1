"""ExpMRC predictions: answer and evidence for every question of an ExpMRC file (`mcqlens expmrc predict`).

The one scoring path: answer and evidence come from `inference.score` (through
`inference.expmrc_answers`), as `mcqlens score` stores them.
"""
from __future__ import annotations

import json
from pathlib import Path

import inference
from desktop.domain.errors import McqLensError
from desktop.formats import atomic, door
from inference.expmrc_answers import answers


def predict(dataset_path: str, model_dir: Path, method: str, device: str = "auto",
            log=print, progress=None) -> dict[str, dict[str, str]]:
    """{"<pid>-<j>": {"answer", "evidence"}}; `progress(done, total)` after each scored batch."""
    (ds,) = door.read(dataset_path, "expmrc")
    passages = {p.id: p for p in ds.passages}
    questions = [q for p in ds.passages for q in p.questions]
    model = inference.load_model(model_dir, device=device)
    if model.fallback:
        log(f"warning: {model.fallback}")
    log(model.message)
    return answers(model, questions, passages, method, progress=progress).predictions


def write_predictions(out: Path, predictions: dict[str, dict[str, str]]) -> None:
    """The prediction file, written beside OUT and renamed over it: a failed run leaves the old
    file, never half a file."""
    try:
        atomic.write_text(out, json.dumps(predictions, ensure_ascii=False, indent=1))
    except OSError as exc:
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
