"""After training, on every GPU at once: the logits the rest of the build needs.

    torchrun --nproc_per_node N -m models.shipping.ship_predict --checkpoint build/run/final --data PACK \\
        --encoded build/encoded.npz --out build/ship/pred

Writes (rank 0), under --out:
* ``eval_rows.jsonl.gz``: float32 logits of every RACE dev question and every evaluation
  record (RACE test, ExpMRC, EMBRACE, DREAM dev, QuAIL dev) in both formats, with id,
  source, level, role and key (`models.evaluation.summary.summarise` reads them);
* ``evaluation.json``: that summary (temperatures fitted on RACE dev);
* ``logits_race.npz``: bf16-autocast logits of every RACE train and dev question in both
  formats (ids, format, key, [n, 4] logits as float16): what a distilled student learns from;
* ``calibration.npz``: per layer, the largest |activation| of each input channel of the FFN
  down-projection over calibration questions (SmoothQuant, `models.export.mpnet_int8.smooth_factors`).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

from models.evaluation.summary import summarise
from models.training import checkpoint, encoded_cache
from models.training.data import read_jsonl
from models.training.distributed import Dist
from models.training.encoding import collate, encode_all, load_tokenizer
from models.training.train_model import predict

CALIBRATION_QUESTIONS = 256


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.shipping.ship_predict", description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", required=True, help="models.training.train's final/ folder")
    ap.add_argument("--data", required=True)
    ap.add_argument("--encoded", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-tokens", type=int, default=64 * 4 * 512)
    ap.add_argument("--race-only", action="store_true",
                    help="only the bf16 logits of RACE train and dev (a distillation's targets)")
    args = ap.parse_args(argv)
    import torch

    dist_ = Dist(torch)
    device = dist_.start("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 reference is float32
    torch.backends.cudnn.allow_tf32 = False
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run = Path(args.checkpoint)
    model = checkpoint.load(run / "model").to(device)
    tok = load_tokenizer(str(run / "model"))
    cfg = json.loads((run / "model" / "config.json").read_text())
    formats = cfg.get("formats", ["standard", "shortcut"])
    records = read_jsonl(args.data)
    meta = {r["id"]: r for r in records}
    cached = {}
    if args.encoded and Path(args.encoded).is_file():
        items, _ = encoded_cache.load(args.encoded)
        cached = {(it.rid, it.fmt): it for it in items}

    def encoded(recs):
        got = [cached.get((r["id"], f)) for f in formats for r in recs]
        if got and all(g is not None for g in got):
            return got
        return encode_all(tok, recs, formats, cfg.get("max_length", 512))

    # 1. float32 logits of RACE dev and the evaluation sets
    ev = [] if args.race_only else [r for r in records if r["role"] in ("dev", "eval")]
    ev_items = encoded(ev) if ev else []
    ev_logits = predict(model, ev_items, torch, device, args.max_tokens, dist_=dist_, bf16=False) if ev else []
    rows = [{"id": it.rid, "format": it.fmt, "key": it.key, "source": meta[it.rid]["source"],
             "level": meta[it.rid].get("level"), "role": meta[it.rid]["role"], "logits": lg}
            for it, lg in zip(ev_items, ev_logits)]
    if dist_.main and ev:
        with gzip.open(out / "eval_rows.jsonl.gz", "wt") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        summary = summarise([r for r in rows if r["role"] == "dev"], [r for r in rows if r["role"] == "eval"])
        (out / "evaluation.json").write_text(json.dumps(summary, indent=1))
        print(json.dumps({"step": "eval_rows", "rows": len(rows)}), flush=True)
    # 2. SmoothQuant statistics (rank 0, a few hundred RACE train questions)
    if dist_.main and not args.race_only:
        train = [r for r in records if r["role"] == "train"][:CALIBRATION_QUESTIONS]
        absmax = calibration(model, encoded(train), torch, device)
        np.savez(out / "calibration.npz", **{f"layer{k}": v for k, v in absmax.items()})
    # 3. bf16 logits of RACE train and dev (the distillation targets)
    race = [r for r in records if r["role"] in ("train", "dev")]
    items = encoded(race)
    logits = predict(model, items, torch, device, args.max_tokens, dist_=dist_, bf16=True)
    if dist_.main:
        width = max(len(lg) for lg in logits)
        arr = np.full((len(items), width), np.nan, dtype=np.float16)
        for i, lg in enumerate(logits):
            arr[i, : len(lg)] = lg
        np.savez_compressed(out / "logits_race.npz", logits=arr,
                            ids=np.array([it.rid for it in items]), formats=np.array([it.fmt for it in items]),
                            keys=np.array([-1 if it.key is None else it.key for it in items]),
                            roles=np.array([meta[it.rid]["role"] for it in items]))
        print(json.dumps({"step": "logits_race", "items": len(items)}), flush=True)
    dist_.end()
    return 0


def calibration(model, items, torch, device) -> dict[int, np.ndarray]:
    """Largest |input| per channel of every FFN down-projection, over the real tokens only."""
    layers = model.encoder.encoder.layer
    absmax = {i: None for i in range(len(layers))}
    state = {"mask": None}

    def hook(i):
        def fn(module, inputs):
            x = inputs[0].float().abs() * state["mask"][..., None]
            m = x.amax(dim=(0, 1)).cpu().numpy()
            absmax[i] = m if absmax[i] is None else np.maximum(absmax[i], m)
        return fn

    handles = [layer.output.dense.register_forward_pre_hook(hook(i)) for i, layer in enumerate(layers)]
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(items), 16):
                idx = list(range(start, min(start + 16, len(items))))
                ids, types, mask, opt_mask, _ = collate(items, idx, torch)
                state["mask"] = mask.reshape(-1, mask.shape[-1]).to(device).float()
                model(ids.to(device), mask.to(device), types.to(device))
    finally:
        for h in handles:
            h.remove()
    return absmax


if __name__ == "__main__":
    sys.exit(main())
