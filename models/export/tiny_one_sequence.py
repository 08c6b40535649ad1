"""The tiny one-sequence test model in tests/data/tiny_oneseq/: a 2-layer, 32-wide MPNet reader.

The shipped reader's architecture and files at toy size: MPNet's tokenizer, relative position
bias and the one-sequence layout (`inference.one_sequence`), random weights with the scorer
scaled so that logits spread by about 1, written through the shipped path
(`models.export.mpnet_onnx.build` → calibration → `models.export.int8_rows.store` → `models.export.external_data`),
so the tests run the product's own code (both CPU recipes, the GPU's fp16 derivation, the
evidence, the give-away words) in milliseconds.  No training: its answers are chance.

    python -m models.export.tiny_one_sequence [--out tests/data/tiny_oneseq]
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from inference.formatting import load_tokenizer
from models.export import external_data, int8_rows, mpnet_onnx
from models.export.mpnet_int8 import activation_absmax

ROOT = Path(__file__).resolve().parents[2]
CONFIG = {"vocab_size": 30527, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
          "intermediate_size": 64, "max_position_embeddings": 514, "relative_attention_num_buckets": 32,
          "layer_norm_eps": 1e-5, "pad_token_id": 1}
MAX_LENGTH = 256


def build(out: Path, tokenizer: Path, seed: int = 0) -> Path:
    import torch

    from models.training.mpnet import MPNetConfig, MPNetEncoder
    from models.training.one_sequence_reader import OneSequenceReader

    torch.manual_seed(seed)
    model = OneSequenceReader(MPNetEncoder(MPNetConfig.from_dict(CONFIG))).eval()
    with torch.no_grad():
        model.scorer.weight.mul_(8.0)
        # one channel 30 times the others after every LayerNorm, as MPNet has: the storage keeps
        # the weight rows it multiplies in float16 (models.export.int8_rows), and the tests see them
        for layer in model.encoder.encoder.layer:
            layer.attention.LayerNorm.weight[5] *= 30.0
            layer.output.LayerNorm.weight[5] *= 30.0
    state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    fp32 = mpnet_onnx.build(state, CONFIG, "mean", layout="one-sequence")
    tok = load_tokenizer(tokenizer)
    calib = [{"passage": "Tom went home early because he was ill. His mother called the doctor.",
              "stem": "Why did Tom go home?", "alternatives": ["He was ill.", "He was bored.", "It rained.", "School ended."]},
             {"passage": "The museum opens at nine and closes at five, except on Mondays.",
              "stem": "The museum is closed on _ .", "alternatives": ["Mondays", "Sundays", "holidays", "Fridays"]}]
    absmax = activation_absmax(fp32, int8_rows.calibration_feeds(tok, calib, MAX_LENGTH))
    stored = int8_rows.store(fp32, int8_rows.outlier_channels(absmax))
    if out.exists():
        shutil.rmtree(out)
    files = external_data.save_split(stored, out, "model.int8.onnx")
    shutil.copy(tokenizer, out / "tokenizer.json")
    card = {"name": "tiny one-sequence test model", "id": "tiny-mpnet-oneseq-2x32",
            "backbone": "random-init MPNet 2x32 (all-mpnet-base-v2's tokenizer)", "formats": ["standard", "shortcut"],
            "max_length": MAX_LENGTH, "layout": "one-sequence", "pooling": "options",
            "temperature": {"standard": 1.0, "shortcut": 1.0}, "files": {"int8": "model.int8.onnx"},
            "tokenizer": "tokenizer.json", "inputs": ["input_ids", "attention_mask", "option_ids"],
            "quantization": {"recipe": int8_rows.RECIPE, "runtime": ["fp32", "int8x2"], "files": files},
            "training": {"data": [], "note": "random weights: a test of the code, not a reader"},
            "command": "python -m models.export.tiny_one_sequence"}
    (out / "card.json").write_text(json.dumps(card, indent=2) + "\n")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.export.tiny_one_sequence", description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "data" / "tiny_oneseq"))
    ap.add_argument("--tokenizer", default=str(ROOT / "models" / "default" / "tokenizer.json"))
    args = ap.parse_args(argv)
    print(build(Path(args.out), Path(args.tokenizer)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
