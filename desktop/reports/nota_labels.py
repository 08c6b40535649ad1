"""A model's NOTA choices against annotators' answerability labels.

Each question labelled answerable, unanswerable or unsure (in the store, or QuAIL's
"not enough information" key on import) is shown to the model with one alternative
that says no answer exists:

* a question that already has one (QuAIL's "not enough information") as it is;
* any other question through the NOTA transform at C = 0: the key stays and one
  distractor becomes the NOTA text, so choosing it means "I find no answer here".

The report counts, per label, how often the model chose that alternative, and gives the
seven metrics on the questions labelled answerable or unanswerable (unsure and
unlabelled questions are counted but left out of the metrics).
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Sequence

from desktop.domain import nota
from desktop.domain.model import ANSWERABILITY, ANSWERABLE, UNANSWERABLE, Passage, letter
from desktop.formats import atomic

UNLABELLED = "unlabelled"
LABELS = (*ANSWERABILITY, UNLABELLED)


def has_labels(passages: Sequence[Passage]) -> bool:
    return any(q.answerability in (ANSWERABLE, UNANSWERABLE) for p in passages for q in p.questions)


def shown_questions(passages: Sequence[Passage], seed: int | str = 1, text: str = nota.NOTA_TEXT):
    """(passage, question as shown to the model, its NOTA alternative index) per question."""
    native = [p for p in passages if all(q.unanswerable_alternatives for q in p.questions)]
    rest = [p for p in passages if p not in native]
    transformed, _ = nota.transform(rest, 0, seed, 1, text) if rest else ([], [])
    labels = {(q.passage_id, q.id): q.answerability for p in rest for q in p.questions}
    out = []
    for p in native:
        for q in p.questions:
            out.append((p, q, q.unanswerable_alternatives[0], q.answerability))
    for p in transformed:
        for q in p.questions:
            # the transform writes its own answerability; the annotators' label is what we compare to
            out.append((p, q, q.unanswerable_alternatives[0], labels[(q.passage_id, q.id)]))
    return out


def rows(passages: Sequence[Passage], scorer, seed: int | str = 1, text: str = nota.NOTA_TEXT,
         batch: int = 64) -> list[dict]:
    """One row per question: label, the alternative chosen, whether it was the NOTA alternative."""
    shown = shown_questions(passages, seed, text)
    out = []
    for start in range(0, len(shown), batch):
        chunk = shown[start:start + batch]
        scores = scorer([(p.text, q.stem, list(q.alternatives), ni) for p, q, ni, _ in chunk])
        for (p, q, ni, label), s in zip(chunk, scores):
            s = list(s)
            chosen = max(range(len(s)), key=lambda i: (s[i], -i))  # first of equal maxima
            out.append({"question": q.id, "passage": p.id, "label": label or UNLABELLED,
                        "chosen": letter(chosen), "key": letter(q.key), "nota": letter(ni),
                        "chose_nota": chosen == ni, "_chosen": chosen, "_key": q.key, "_nota": ni})
    return out


def summary(label_rows: Sequence[dict]) -> tuple[dict[str, dict[str, int]], dict[str, float | None]]:
    """({label: {"nota": n, "other": n}}, metrics over questions labelled answerable/unanswerable)."""
    table = {lab: {"nota": 0, "other": 0} for lab in LABELS}
    conf = nota.Confusion()
    for r in label_rows:
        table[r["label"]]["nota" if r["chose_nota"] else "other"] += 1
        if r["label"] in (ANSWERABLE, UNANSWERABLE):
            key = r["_nota"] if r["label"] == UNANSWERABLE else r["_key"]
            conf.add(r["label"] == ANSWERABLE, r["_chosen"], key, r["_nota"])
    return table, nota.metrics(conf)


def write(label_rows: Sequence[dict], folder: str | Path, model: str = "") -> list[Path]:
    """labels_<model>.csv (per question) and labels_<model>_summary.csv (per label, then metrics)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_")
    stem = f"labels_{slug}" if slug else "labels"
    per_q = folder / f"{stem}.csv"
    fields = ["question", "passage", "label", "key", "nota", "chosen", "chose_nota"]
    with atomic.replacing(per_q) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(label_rows)
    table, metrics = summary(label_rows)
    summ = folder / f"{stem}_summary.csv"
    with atomic.replacing(summ) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["label", "chose NOTA", "chose another alternative", "total"])
        for lab in LABELS:
            t = table[lab]
            w.writerow([lab, t["nota"], t["other"], t["nota"] + t["other"]])
        w.writerow([])
        w.writerow(["metric (labelled answerable/unanswerable only)", "value"])
        for name, label, _ in nota.METRICS:
            v = metrics[name]
            w.writerow([label, "" if v is None else f"{v:.4f}"])
    return [per_q, summ]
