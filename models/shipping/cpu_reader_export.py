"""A distilled student's shipped files on the GPU machine (`python -m models.shipping.cpu_reader_ship
export --name m12`, run by the pipeline as each student ends): its ONNX graph
(`models.export.mpnet_onnx.build`, one-sequence layout), calibration on RACE train questions, the int8
storage with float16 outlier rows (`models.export.int8_rows`) written as files under 16 MiB, and the
stored weights' argmax agreement with the float student on RACE dev (``export.json``).
"""
from __future__ import annotations

import json
import shutil
import time

from models.export import external_data
from models.shipping.cpu_reader_steps import RESULTS, WORK, pack
from models.training.data import read_jsonl

CALIBRATION_QUESTIONS = 48


def export_student(name: str, device: str = "cuda") -> dict:
    """The student's stored int8 files (under RESULTS/<name>/model) and their agreement with it."""
    import numpy as np
    import torch

    from inference.formatting import load_tokenizer
    from models.export import int8_rows, mpnet_onnx
    from models.export.mpnet_int8 import activation_absmax
    from models.training.distill import predict
    from models.training.one_sequence_data import load as load_items
    from models.training.one_sequence_reader import load as load_student, mpnet_student

    t0 = time.time()
    src = WORK / "students" / name
    out = RESULTS / name
    out.mkdir(parents=True, exist_ok=True)
    for f in ("metrics.json", "logits_eval.npz"):
        shutil.copy(src / f, out / f)
    model = load_student(src / "model")
    cfg = json.loads((src / "model" / "config.json").read_text())
    state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    fp32 = mpnet_onnx.build(state, cfg, "mean", layout="one-sequence")
    tok = load_tokenizer(WORK / "teacher" / "tokenizer.json")
    train = [r for r in read_jsonl(pack()) if r["role"] == "train"][:CALIBRATION_QUESTIONS]
    absmax = activation_absmax(fp32, int8_rows.calibration_feeds(tok, train))
    channels = int8_rows.outlier_channels(absmax)
    stored = int8_rows.store(fp32, channels)
    files = external_data.save_split(stored, out / "model", "model.int8.onnx")
    shutil.copy(WORK / "teacher" / "tokenizer.json", out / "model" / "tokenizer.json")
    # the stored weights, dequantized, against the float student on RACE dev (float32 on its GPU)
    dense_state, _ = mpnet_onnx.state_from_graph(stored)
    again = mpnet_student(dense_state, {**cfg, "num_hidden_layers": cfg["num_hidden_layers"]},
                          list(range(cfg["num_hidden_layers"]))).to(device).eval()
    torch.backends.cuda.matmul.allow_tf32 = False
    items = [it for it in load_items(WORK / "enc.npz") if it.role == "dev"]
    ref = np.load(src / "logits_eval.npz")
    dev_rows = ref["roles"] == "dev"
    agreement = {}
    for L in (512, 384):
        got = predict(again, items, torch, device, 49152, L, int(cfg.get("pad_token_id", 1)))
        want = ref[f"logits{L}"][dev_rows]
        for fmt in ("standard", "shortcut"):
            pick = [i for i, it in enumerate(items) if it.fmt == fmt]
            same = [int(np.argmax(got[i])) == int(np.nanargmax(want[i])) for i in pick]
            agreement[f"{fmt}@{L}"] = sum(same) / max(1, len(same))
    info = {"files": files, "bytes": sum((out / "model" / f).stat().st_size for f in files),
            "outlier_rows": {k: v.tolist() for k, v in channels.items()},
            "calibration": f"{CALIBRATION_QUESTIONS} RACE train questions x 2 formats, largest |x| per input channel; "
                           f"rows above {int8_rows.RATIO}x the median channel, at most {int8_rows.MOST}",
            "agreement_stored_vs_float_dev": agreement, "questions": len(items) // 2,
            "seconds": round(time.time() - t0, 1)}
    (out / "export.json").write_text(json.dumps(info, indent=1))
    return info
