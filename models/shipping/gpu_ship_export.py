"""The MPNet reader's graph and int8 files on the GPU machine (`step_export`, a step of
`models.shipping.gpu_ship run`): the ONNX graph built from the trained weights (`models.export.mpnet_onnx`)
and checked against PyTorch; int8 recipes (`models.export.mpnet_int8`) tried from the fastest, the first
whose argmax agrees with float32 on >= 99.3% of a RACE dev sample in both formats shipped
(`write_model_dir`: files < 16 MiB, tokenizer, card.json).
"""
from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path

from models.export import external_data
from models.shipping.gpu_ship_steps import MODEL_DIR, RESULTS, SHIP, log, mark, pack
from models.training import checkpoint
from models.training.data import read_jsonl

AGREE_MIN = 0.993  # on the RACE dev sample; the shipped rule is >= 99% on all of RACE dev
DEV_SAMPLE_EVERY = 5
ORDER = [("full", None), ("smooth", 0.5), ("smooth", 0.8), ("keep-ffn-out", None), ("weights", None)]


def _rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def step_export(processes: int) -> dict:
    """ONNX graph from the weights, checked; int8 recipes tried fastest first; the first that
    agrees is written, split, as the model directory."""
    import numpy as np
    import onnx
    import torch

    from inference.formatting import encode_questions, load_tokenizer
    from inference.unpadded import unpadded_logits
    from models.export import int8_check, mpnet_int8, mpnet_onnx

    final = Path("build/run/final/model")
    model = checkpoint.load(final).float().eval()
    cfg = json.loads((final / "config.json").read_text())
    state = mpnet_onnx.state_arrays(model)
    work = SHIP / "graphs"
    work.mkdir(parents=True, exist_ok=True)
    fp32 = mpnet_onnx.build(state, cfg, cfg.get("pooling", "mean"))
    onnx.save(fp32, str(work / "fp32.onnx"))
    records = [r for r in read_jsonl(pack()) if r["role"] == "dev"]
    tok = load_tokenizer(final / "tokenizer.json")
    # the graph computes what PyTorch computes (float32, 8 questions, both formats)
    import onnxruntime as ort

    sess = ort.InferenceSession(str(work / "fp32.onnx"), providers=["CPUExecutionProvider"])
    diffs = {}
    for fmt in ("standard", "shortcut"):
        enc = encode_questions(tok, [(r["passage"], r["stem"], r["alternatives"]) for r in records[:8]], fmt, 512)
        with torch.no_grad():
            ref = model(torch.from_numpy(enc.input_ids), torch.from_numpy(enc.attention_mask)).numpy()
        got = unpadded_logits(lambda f: sess.run(["logits"], f)[0], enc, ["input_ids", "attention_mask"])
        diffs[fmt] = float(np.abs(ref - got)[enc.option_mask].max())
    log("fp32 graph checked", max_abs_diff=diffs)
    if max(diffs.values()) > 1e-3:
        raise RuntimeError(f"the ONNX graph differs from PyTorch by {diffs}")
    del sess
    # recipes, fastest first, on a RACE dev sample against the float32 PyTorch logits
    ref = {(r["id"], r["format"]): r["logits"] for r in _rows(RESULTS / "eval_rows.jsonl.gz") if r["role"] == "dev"}
    sample = records[::DEV_SAMPLE_EVERY]
    calib = np.load(RESULTS / "calibration.npz")
    absmax = {int(k[5:]): calib[k] for k in calib.files}
    tried, chosen = [], None
    for recipe, alpha in ORDER:
        t0 = time.time()
        graph = fp32
        if recipe == "smooth":
            graph = mpnet_onnx.build(state, cfg, cfg.get("pooling", "mean"),
                                     smooth=mpnet_int8.smooth_factors(absmax, state, alpha))
        q = mpnet_int8.quantize(graph, recipe)
        path = work / f"{recipe}{'' if alpha is None else alpha}.onnx"
        onnx.save(q, str(path))
        got = int8_check.logits("graph", path, sample, ["standard", "shortcut"], processes,
                                tokenizer=final / "tokenizer.json")
        agree = int8_check.agreement(ref, got)
        tried.append({"recipe": recipe, "alpha": alpha, "agreement": agree, "questions": len(sample),
                      "seconds": round(time.time() - t0, 1)})
        log("recipe", **tried[-1])
        (RESULTS / "export.json").write_text(json.dumps({"fp32_max_abs_diff": diffs, "tried": tried}, indent=1))
        if min(agree.values()) >= AGREE_MIN or recipe == "weights":
            chosen = {"recipe": recipe, "alpha": alpha, "graph": q}
            break
    write_model_dir(chosen, final, cfg)
    info = {"fp32_max_abs_diff": diffs, "tried": tried, "chosen": {k: chosen[k] for k in ("recipe", "alpha")},
            "files": sorted(p.name for p in MODEL_DIR.iterdir())}
    (RESULTS / "export.json").write_text(json.dumps(info, indent=1))
    mark("model", **info)
    log("model written", **info["chosen"])
    return info


def write_model_dir(chosen: dict, final: Path, cfg: dict, out: Path = MODEL_DIR) -> None:
    """The chosen int8 graph as a model directory (`out`; round 2 writes results/model2), split in
    files < 16 MiB, with the tokenizer and the card."""
    if out.exists():
        shutil.rmtree(out)
    files = external_data.save_split(chosen["graph"], out, "model.int8.onnx")
    shutil.copy(final / "tokenizer.json", out / "tokenizer.json")
    ev = json.loads((RESULTS / "evaluation_torch.json").read_text())
    metrics = json.loads((RESULTS / "train_metrics.json").read_text())
    card = {
        "name": "MPNet reader (RACE)", "id": "mpnet-race-v1", "backbone": "sentence-transformers/all-mpnet-base-v2",
        "formats": ["standard", "shortcut"], "max_length": int(cfg.get("max_length", 512)),
        "temperature": {f: ev["formats"][f]["temperature"] for f in ev["formats"]},
        "files": {"int8": "model.int8.onnx"}, "tokenizer": "tokenizer.json",
        "inputs": ["input_ids", "attention_mask"], "pooling": cfg.get("pooling", "mean"),
        "training": {**metrics.get("training", {}), "history": metrics.get("history")},
        "quantization": {"recipe": chosen["recipe"], "alpha": chosen["alpha"], "files": files},
        "command": "python -m models.shipping.gpu_ship start (docs/models_gpu_build.md)",
        "created": time.strftime("%Y-%m-%d"),
    }
    (out / "card.json").write_text(json.dumps(card, indent=2) + "\n")
