"""MPNet through the product's export and CPU runtime, with a STAND-IN reader.

STAND-IN: pretrained all-mpnet-base-v2 with an UNTRAINED scorer (random linear layer,
seed 0).  Its answers mean nothing; it exists to check that export, ONNX Runtime's
optimizer, the CPU layout code and quantization handle MPNet's graph (its attention
adds a relative position bias), and to time one question on this machine before a
trained MPNet exists.  Nothing it writes is committed.

    python benchmarks/bench_mpnet_standin.py /work/mpnet/all-mpnet-base-v2 --work /tmp/mpnet_standin [--questions 16]

Prints: the fused operator counts, what `inference.cpu_graph` rewrote, agreement of int8
(dynamic, weight-only) with fp32 (argmax and max |Δlogit|) on RACE dev questions in both
formats, and p95 latency of one question in both formats (fp32 ONNX, int8 dynamic,
int8 weight-only, PyTorch eager fp32 on the same weights).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RACE_DEV = ROOT.parent / "shared" / "data" / "race" / "dev"


def race_dev_questions(n: int):
    out = []
    for level in ("high", "middle"):
        for f in sorted((RACE_DEV / level).glob("*.txt"), key=lambda p: int(p.stem)):
            r = json.loads(f.read_text(encoding="utf-8"))
            for q, opts in zip(r["questions"], r["options"]):
                out.append((r["article"], q, opts))
                if len(out) >= n // 2 * (2 if level == "middle" else 1):
                    break
            if len(out) >= n // 2 * (2 if level == "middle" else 1):
                break
    return out[:n]


def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("backbone")
    ap.add_argument("--work", default="/tmp/mpnet_standin")
    ap.add_argument("--questions", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--reuse", action="store_true", help="keep the graphs already under --work (no new export)")
    args = ap.parse_args(argv)
    import onnxruntime as ort
    import torch

    from inference import formatting
    from inference.cpu_graph import DISABLED_OPTIMIZERS
    from models.export import onnx_export as E
    from models.export.quantize import weight_only_int8
    from models.training.mc_model import HFEncoder, MultipleChoiceModel

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = MultipleChoiceModel(HFEncoder.from_pretrained(args.backbone), pooling="mean").eval()
    tok = formatting.load_tokenizer(Path(args.backbone) / "tokenizer.json")
    qs = race_dev_questions(args.questions)
    enc = {f: formatting.encode_questions(tok, qs, f, 512) for f in ("standard", "shortcut")}
    report = {"STAND-IN": "pretrained MPNet + untrained scorer; answers are meaningless"}
    if not (args.reuse and (work / "int8.weightonly.onnx").is_file()):
        t = time.time()
        sample = formatting.encode_questions(tok, qs[:2], "shortcut", 64)
        E.export_onnx(model, work / "fp32.onnx", sample)
        report["export_s"] = round(time.time() - t, 1)
        report["fused"] = E.optimize(work / "fp32.onnx", work / "fp32.opt.onnx", 12, 768)
        print(json.dumps(report), flush=True)
        report["cpu_layout"] = E.cpu_layout(work / "fp32.opt.onnx", work / "fp32.cpu.onnx")
        print(json.dumps({"cpu_layout": report["cpu_layout"]}), flush=True)
        E.quantize_int8(work / "fp32.opt.onnx", work / "int8.dynamic.onnx")
        weight_only_int8(work / "fp32.opt.onnx", work / "int8.weightonly.onnx")
    graphs = {"fp32": work / "fp32.opt.onnx", "int8-dynamic": work / "int8.dynamic.onnx",
              "int8-weight-only": work / "int8.weightonly.onnx"}
    logits = {}
    for fmt, e in enc.items():
        logits[(fmt, "torch")] = E.torch_logits(model, e, batch=4)
        for name, path in graphs.items():
            logits[(fmt, name)] = E.onnx_logits(path, e, batch=4)
        print(f"logits of {fmt} done", flush=True)
    for fmt, e in enc.items():
        ref = logits[(fmt, "fp32")]
        report[f"{fmt}: fp32 ONNX vs torch, max |d logit|"] = float(np.max(np.abs(ref - logits[(fmt, "torch")])[e.option_mask]))
        for name in ("int8-dynamic", "int8-weight-only"):
            got = logits[(fmt, name)]
            report[f"{fmt}: {name} vs fp32"] = {"argmax_agreement": E.agreement(ref, got, e.option_mask),
                                                "max_abs_diff": float(np.max(np.abs(ref - got)[e.option_mask]))}
    print(json.dumps({k: v for k, v in report.items() if ":" in k}, indent=1), flush=True)
    # one question in both formats, timed (the question the runtime sees: one call per format)
    one = {f: formatting.encode_questions(tok, qs[:1], f, 512) for f in ("standard", "shortcut")}
    times = {}
    torch.set_num_threads(2)
    for name, path in graphs.items():
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=DISABLED_OPTIMIZERS)
        names = [i.name for i in sess.get_inputs()]
        from inference.unpadded import graph_is_unpadded, unpadded_logits

        def run(e):
            if graph_is_unpadded(sess):
                return unpadded_logits(lambda feeds: sess.run(["logits"], feeds)[0], e, names)
            return sess.run(["logits"], e.feeds(names))[0]
        for e in one.values():
            run(e)
        xs = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            for e in one.values():
                run(e)
            xs.append(time.perf_counter() - t)
        times[name] = xs
    xs = []
    with torch.no_grad():
        for _ in range(args.repeats + 1):
            t = time.perf_counter()
            for e in one.values():
                E.torch_logits(model, e)
            xs.append(time.perf_counter() - t)
    times["torch-eager-fp32"] = xs[1:]
    report["one_question_both_formats_s"] = {k: {"p50": statistics.median(v), "p95": p95(v)} for k, v in times.items()}
    print(json.dumps({"one_question_both_formats_s": report["one_question_both_formats_s"],
                      "tokens": {f: int(e.lengths.max()) for f, e in one.items()}}, indent=1), flush=True)
    (work / "report.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
