"""The tiny test model in tests/data/tiny_model/: a 2-layer, 32-wide BERT with MiniLM's tokenizer.

Random weights (optionally trained for some CPU seconds on DREAM), the scoring layer
scaled so that option logits spread by about 1 (its probabilities are far from uniform,
though no better than chance), temperatures fitted on DREAM dev by the seed's rule (1.0
when the rule hits its bound at chance accuracy), exported through `models.export.onnx_export`
exactly as a real model is.  Only the int8 graph is shipped (the fp32 one, with its
30522 × 32 embedding, would not fit 2 MB); with margins this small, full dynamic
quantization flips a third of the predictions, so the export keeps the embedding-only
int8 graph, which agrees with fp32 on >= 99% of DREAM dev.

    python -m models.export.tiny [--out tests/data/tiny_model] [--seconds 0]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

import inference
from inference import formatting, metrics
from inference.card import ModelCard
from models.export.onnx_export import torch_logits, write_model_dir
from models.training.mc_model import BertConfig, build, default_backbone

DREAM = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "dream"
TINY = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                  max_position_embeddings=256)
MAX_LENGTH = 256
FORMATS = [formatting.STANDARD, formatting.SHORTCUT]


def dream_questions(split: str, limit: int | None = None) -> list[tuple[str, str, list[str], int]]:
    """(passage, stem, alternatives, key) from the DREAM json (dialogue turns joined by newlines)."""
    out = []
    for turns, qs, _pid in json.loads((DREAM / f"{split}.json").read_text(encoding="utf-8")):
        text = "\n".join(turns)
        for q in qs:
            out.append((text, q["question"], list(q["choice"]), q["choice"].index(q["answer"])))
    return out[:limit] if limit else out


def encode(tokenizer, items, fmt):
    return formatting.encode_questions(tokenizer, [(p, s, a) for p, s, a, _ in items], fmt, MAX_LENGTH)


def train(model, tokenizer, items, seconds: float, seed: int = 0, lr: float = 3e-3) -> dict:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    encoded = {fmt: encode(tokenizer, items, fmt) for fmt in FORMATS}
    keys = torch.tensor([k for *_, k in items])
    model.train()
    start, steps = time.time(), 0
    while time.time() - start < seconds:
        fmt = FORMATS[steps % len(FORMATS)]
        enc = encoded[fmt]
        idx = rng.choice(len(items), size=16, replace=False)
        width = int(enc.lengths[idx].max())
        args = [torch.from_numpy(a[idx][:, :, :width]) for a in (enc.input_ids, enc.attention_mask, enc.token_type_ids)]
        loss = torch.nn.functional.cross_entropy(model(*args), keys[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    model.eval()
    return {"steps": steps, "seconds": round(time.time() - start, 1), "batch": 16, "lr": lr}


def spread_scores(model, tokenizer, items, target_std: float = 1.0) -> float:
    """Scale the scoring layer so that logits vary by about `target_std` across options.

    A few CPU seconds of training leave a 32-wide model nearly uniform (logit spread
    ~0.01), below int8 rounding noise; a wider spread keeps its outputs informative
    for tests and its int8 argmax stable.  The ranking of options does not change.
    """
    enc = encode(tokenizer, items, formatting.SHORTCUT)
    std = float(np.std(torch_logits(model, enc), axis=1).mean())
    factor = target_std / max(std, 1e-6)
    with torch.no_grad():
        model.scorer.weight.mul_(factor)
        model.scorer.bias.mul_(factor)
    return factor


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "tests" / "data" / "tiny_model"))
    ap.add_argument("--seconds", type=float, default=0.0)
    ap.add_argument("--train", type=int, default=600)
    ap.add_argument("--dev", type=int, default=300)
    args = ap.parse_args(argv)

    tok_path = default_backbone() / "tokenizer.json"
    tokenizer = formatting.load_tokenizer(tok_path)
    model = build(config=TINY, seed=0)
    train_items = dream_questions("train", args.train)
    dev_items = dream_questions("dev", args.dev)
    log = train(model, tokenizer, train_items, args.seconds)
    log["score_scale"] = round(spread_scores(model, tokenizer, dev_items), 3)
    card = ModelCard(name="tiny test model", id="tiny-bert-2x32", backbone="random-init BERT 2x32 "
                     "(MiniLM tokenizer)", formats=FORMATS, max_length=MAX_LENGTH, pooling="cls",
                     training={"data": [f"DREAM train first {len(train_items)} questions"],
                               "seeds": [0], **log},
                     command=f"python -m models.export.tiny --seconds {args.seconds:g} --train {args.train} --dev {args.dev}")
    validation = encode(tokenizer, dev_items, formatting.STANDARD)
    out = Path(args.out)
    # ship the int8 graph only (size), then fit temperatures with the graph that is shipped
    write_model_dir(model, tok_path, out, card, validation, precisions=("fp32", "int8"), ship=("int8",))
    loaded = inference.load_model(out, device="cpu")
    keys = np.array([k for *_, k in dev_items])
    temps, mets = {}, {}
    for fmt in FORMATS:
        enc = encode(tokenizer, dev_items, fmt)
        logits = loaded.runner.logits(enc)
        t = metrics.fit_temperature(logits, keys)
        # at chance accuracy the rule drives T to its bound (uniform output); keep T=1 then
        t = t if metrics.T_MIN < t < metrics.T_MAX else 1.0
        temps[fmt] = round(t, 4)
        mets[fmt] = {"dev_accuracy": metrics.accuracy(logits, keys),
                     "ece_before": metrics.expected_calibration_error(metrics.softmax(logits), keys),
                     "ece_after": metrics.expected_calibration_error(metrics.softmax(logits, t), keys)}
    card.temperature = temps
    card.metrics = {"data": f"DREAM dev first {len(dev_items)} questions", **mets}
    card.save(out)
    size = sum(f.stat().st_size for f in out.iterdir())
    print(json.dumps({"dir": str(out), "bytes": size, "temperature": temps, "metrics": mets,
                      "export": card.extra.get("export"), **log}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
