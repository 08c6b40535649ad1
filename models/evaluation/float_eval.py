"""The float model of a shipped one-sequence directory: its stored weights, dequantized, in PyTorch
float32 (TF32 off), on every evaluation set at each maximum length.

    python -m models.evaluation.float_eval --model DIR --data race.jsonl.xz --out OUT [--lengths 384,512] [--device cuda]

This is the reference the CPU recipes are checked against (argmax agreement on RACE dev,
`inference.cpu_recipes`): the same weights the product computes with, in float arithmetic.
Writes OUT/float32_<set>_<length>.jsonl.gz rows as `models.evaluation.recipe_eval` does.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

from models.training.data import read_jsonl


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.evaluation.float_eval", description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--lengths", default="384,512")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args(argv)
    import onnx
    import torch

    from inference.card import files_directory, load_card
    from models.evaluation.product_eval import SETS
    from models.export.mpnet_onnx import state_from_graph
    from models.training.distill import predict
    from models.training.one_sequence_data import encode
    from models.training.one_sequence_reader import mpnet_student

    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    d = Path(args.model)
    card = load_card(d)
    state, cfg = state_from_graph(onnx.load(str(files_directory(d, card) / card.files["int8"])))
    reader = mpnet_student(state, {**cfg, "pad_token_id": 1}).to(device).eval()
    records = [r for r in read_jsonl(args.data) if r["role"] in ("dev", "eval")]
    meta = {r["id"]: r for r in records}
    items = encode(records, str(files_directory(d, card) / card.tokenizer), max_length=512,
                   processes=max(1, (os.cpu_count() or 2) // 2))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for length in (int(x) for x in args.lengths.split(",")):
        logits = predict(reader, items, torch, device, 65536, length, 1)
        for name, keep in SETS.items():
            rows = [{"id": it.rid, "format": it.fmt, "key": meta[it.rid].get("key"), "source": meta[it.rid]["source"],
                     "level": meta[it.rid].get("level"), "role": meta[it.rid]["role"], "recipe": "float32 (PyTorch)",
                     "max_length": length, "logits": z} for it, z in zip(items, logits) if keep(meta[it.rid])]
            with gzip.open(out / f"float32_{name}_{length}.jsonl.gz", "wt") as f:
                for row in rows:
                    f.write(json.dumps(row) + "\n")
        print(json.dumps({"length": length, "items": len(items)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
