"""Evaluate a trained run on the build's evaluation sets (never trained or tuned on).

`main` runs the trained checkpoint on a GPU (or CPU) over the packed records
(`models.training.race_pack`) and writes eval_predictions.jsonl and evaluation.json
(`models.evaluation.summary.summarise`: per format, the temperature fitted on dev, accuracy with a
95% Wilson interval on each evaluation set, ECE before and after, the shortcut N < 2 measure).

    python -m models.evaluation.checkpoint_eval --run carry/build/run/final --data carry/race.jsonl.gz
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from models.evaluation.summary import summarise
from models.training import checkpoint
from models.training.data import read_jsonl
from models.training.encoding import encode_all, load_tokenizer
from models.training.train_model import predict


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.evaluation.checkpoint_eval", description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True, help="a run folder with model/ (models.training.train's final/)")
    ap.add_argument("--data", required=True, help="packed records (models.training.race_pack)")
    ap.add_argument("--formats", default="standard,shortcut")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--max-tokens", type=int, default=64 * 4 * 512)
    args = ap.parse_args(argv)
    import torch

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
