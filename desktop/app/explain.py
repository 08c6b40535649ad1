"""Explaining a store: the words that give the key away to the shortcut model (`mcqlens explain`).

Each question's `inference.giveaway.Explanation` is read from the store when one is stored for
the model, variant and item text, else computed and stored; `write_csv` writes them as the
command's CSV (`COLUMNS`).  The window's Why? view computes the same per item.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable

from desktop.app import paths
from desktop.domain.errors import McqLensError
from desktop.domain.giveaway_kinds import FLAGGED_N
from desktop.domain.model import letter
from desktop.formats import atomic
from inference import giveaway as G

COLUMNS = ("item_id", "model", "predicted", "n_eff", "giveaway", "together")
CHUNK = 64  # questions per store transaction: an interruption loses at most this much


def explain_store(store, model, item_ids: list[str] | None = None, source: str | None = None,
                  method: str | None = None, phrase: int = 1, scope: str | None = None,
                  together: int | None = None, recompute: bool = False,
                  flagged: bool = False,
                  progress: Callable[[int, int], None] | None = None) -> list:
    """The `Explanation` of every question asked for, in import order: read from the store when
    one is stored for this model, variant and item text, else computed and stored.  The
    questions are read, explained and stored CHUNK at a time (one transaction each: an
    interruption loses at most that much, and all of RACE is never in memory at once).  With
    `flagged`, only the questions the shortcut model answers with N < 2.  `progress(done,
    total)` counts the questions considered."""
    method = method or G.DEFAULT_METHOD
    scope = scope or G.DEFAULT_SCOPE
    together = G.DEFAULT_TOGETHER if together is None else together
    key = G.variant(method, scope, phrase, together)
    G.check_model(model)
    if item_ids is None:
        item_ids = [r.item_id for r in store.items(source=source)]
    total, done, out = len(item_ids), 0, []
    if progress is not None:
        progress(0, total)
    for start in range(0, total, CHUNK):
        questions = store.questions(item_ids[start:start + CHUNK])
        have: dict[str, object] = {}
        if not recompute:
            for q in questions:
                data = store.explanation(q.id, model.id, key)
                ex = G.Explanation.from_json(data) if data is not None else None
                if G.current(ex, q, model.id, key):
                    have[q.id] = ex
        if flagged:
            todo = [q for q in questions if q.id not in have]
            keep = {q.id for q, s in zip(todo, G.shortcut_probabilities(model, todo))
                    if s is not None and s.n_eff < FLAGGED_N}
            keep |= {i for i, ex in have.items() if ex.n_eff < FLAGGED_N}
            questions = [q for q in questions if q.id in keep]
        todo = [q for q in questions if q.id not in have]
        ready = done + len(item_ids[start:start + CHUNK]) - len(todo)

        def step(k, _n, ready=ready):
            if progress is not None:
                progress(ready + k, total)

        got = (G.explain(model, todo, method=method, phrase=phrase, scope=scope, together=together, progress=step)
               if todo else [])
        if got:
            store.model_outputs.add_explanations([ex.to_json() for ex in got])
        have.update((ex.item_id, ex) for ex in got)
        out += [have[q.id] for q in questions if q.id in have]
        done += len(item_ids[start:start + CHUNK])
        if progress is not None:
            progress(done, total)
    return out


def write_csv(explanations, out_path, force: bool = False, top: int | None = None) -> int:
    """The CSV (COLUMNS), written beside OUT and renamed into place."""
    out = Path(out_path)
    paths.output_file(out, force)
    try:
        with atomic.replacing(out) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for ex in explanations:
                w.writerow([ex.item_id, ex.model_id, letter(ex.predicted), f"{ex.n_eff:.4f}", ex.giveaway_json(top),
                            ex.together_json()])
    except OSError as exc:
        raise McqLensError(f"cannot write {out}: {exc.strerror or exc}; nothing was written") from exc
    return len(explanations)
