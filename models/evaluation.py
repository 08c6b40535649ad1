"""Evaluate a trained run on the build's evaluation sets (never trained or tuned on).

`summarise` (numpy only) takes logit rows `{id, source, level, format, key, logits}` of
dev and of the evaluation records and gives, per format:

* the temperature fitted on dev by the seed's rule (accuracy = mean max probability);
* accuracy with a 95% Wilson interval on RACE test (high, middle, all), ExpMRC RACE+ dev,
  EMBRACE green + yellow, DREAM dev and QuAIL dev;
* ECE (10 bins) before and after the temperature on every set;
* on RACE test, the seed's human-study measure: how many questions the shortcut system
  answers with N < 2 (after its temperature), and its accuracy on them.

`main` runs the trained checkpoint on a GPU (or CPU) over the packed records
(`models.race_pack`) and writes eval_predictions.jsonl and evaluation.json.

    python -m models.evaluation --run carry/build/run/final --data carry/race.jsonl.gz
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

SETS = ("race-test-high", "race-test-middle", "race-test", "expmrc", "embrace", "dream", "quail")
N_SHORTCUT_MAX = 2.0


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson 95% interval of k right of n: the one interval of the report and the GPU evaluation."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def set_of(row: dict) -> list[str]:
    """The evaluation sets a row belongs to (RACE test rows: their level's and the whole test set)."""
    src = row.get("source") or row["id"].split(":", 1)[0]
    if src == "race":
        return [f"race-test-{row.get('level', '')}", "race-test"]
    return [src]


def logit_arrays(rows: list[dict]):
    """The rows' logits as one array (short rows padded with -inf) and their keys."""
    width = max(len(r["logits"]) for r in rows)
    z = np.full((len(rows), width), -np.inf)
    for i, r in enumerate(rows):
        z[i, : len(r["logits"])] = r["logits"]
    return z, np.array([r["key"] for r in rows])


def _probs(z: np.ndarray, t: float) -> np.ndarray:
    from inference.metrics import softmax

    return softmax(z, t)


def summarise(dev_rows: list[dict], eval_rows: list[dict]) -> dict:
    from inference.metrics import entropy_bits, expected_calibration_error, fit_temperature

    out: dict = {"formats": {}}
    formats = sorted({r["format"] for r in eval_rows})
    for fmt in formats:
        dz, dk = logit_arrays([r for r in dev_rows if r["format"] == fmt])
        t = fit_temperature(np.where(np.isfinite(dz), dz, -1e9), dk)
        res: dict = {"temperature": t, "dev_accuracy": float((dz.argmax(1) == dk).mean()), "sets": {}}
        by_set: dict[str, list[dict]] = {}
        for r in eval_rows:
            if r["format"] == fmt:
                for s in set_of(r):
                    by_set.setdefault(s, []).append(r)
        for s in SETS:
            rows = by_set.get(s)
            if not rows:
                continue
            z, k = logit_arrays(rows)
            right = int((z.argmax(1) == k).sum())
            lo, hi = wilson(right, len(rows))
            res["sets"][s] = {"n": len(rows), "accuracy": right / len(rows), "ci95": [lo, hi],
                              "ece_before": expected_calibration_error(_probs(z, 1.0), k),
                              "ece_after": expected_calibration_error(_probs(z, t), k)}
        if fmt == "shortcut" and by_set.get("race-test"):
            z, k = logit_arrays(by_set["race-test"])
            p = _probs(z, t)
            n_eff = 2.0 ** entropy_bits(p)
            low = n_eff < N_SHORTCUT_MAX
            res["shortcut_n_below_2"] = {"n": int(low.sum()),
                                         "accuracy": float((p.argmax(1)[low] == k[low]).mean()) if low.any() else None}
        out["formats"][fmt] = res
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.evaluation", description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True, help="a run folder with model/ (models.train's final/)")
    ap.add_argument("--data", required=True, help="packed records (models.race_pack)")
    ap.add_argument("--formats", default="standard,shortcut")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--max-tokens", type=int, default=64 * 4 * 512)
    args = ap.parse_args(argv)
    import torch

    from models import checkpoint
    from models.data import read_jsonl
    from models.encoding import encode_all, load_tokenizer
    from models.train_model import predict

    run = Path(args.run)
    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    model = checkpoint.load(run / "model").to(device)
    tok = load_tokenizer(str(run / "model"))
    cfg = json.loads((run / "model" / "config.json").read_text())
    records = [r for r in read_jsonl(args.data) if r["role"] in ("dev", "eval")]
    formats = args.formats.split(",")
    items = encode_all(tok, records, formats, cfg.get("max_length", 512))
    logits = predict(model, items, torch, device, args.max_tokens)
    meta = {r["id"]: r for r in records}
    rows = [{"id": it.rid, "format": it.fmt, "key": it.key, "source": meta[it.rid]["source"],
             "level": meta[it.rid].get("level"), "role": meta[it.rid]["role"], "logits": lg}
            for it, lg in zip(items, logits)]
    with open(run / "eval_predictions.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    summary = summarise([r for r in rows if r["role"] == "dev"], [r for r in rows if r["role"] == "eval"])
    (run / "evaluation.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
