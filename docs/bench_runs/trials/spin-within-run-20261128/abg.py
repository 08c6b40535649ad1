"""Paired A/B of graph variants on the product's feeds (RACE dev, both formats)."""
import os, sys, time, json, copy, importlib
import numpy as np, onnx, onnxruntime as ort
sys.path.insert(0, "/work/main"); sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/scratch/s2")
from inference import cpu_recipes, option_attention, one_sequence, formatting
from inference.cpu_graph import DISABLED_OPTIMIZERS
from tokenizers import Tokenizer
from bench_inference import questions
import mut
MODEL = os.environ.get("MODEL", "/work/main/models/default")
recipe = os.environ.get("RECIPE", "int8x2-first9")
variants = sys.argv[1].split(";")  # e.g. "base;mif;mif,bias,sums"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
base = cpu_recipes.derive(onnx.load(f"{MODEL}/model.int8.onnx"), recipe, inplace=True)
sessions = {}
for v in variants:
    g = onnx.ModelProto.FromString(base.SerializeToString())
    spin = "0"; dis = list(DISABLED_OPTIMIZERS)
    parts = [p for p in v.split(",") if p != "base"]
    stop = "stop" in parts
    if stop: parts.remove("stop")
    if "spin" in parts: spin = "1"; parts.remove("spin")
    if "skipln" in parts: dis = []; parts.remove("skipln")
    if parts: g = mut.mutate(g, ",".join(parts))
    option_attention.add(g, [9])
    o = ort.SessionOptions(); o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    o.intra_op_num_threads = int(os.environ.get("THREADS", "2")); o.add_session_config_entry("session.intra_op.allow_spinning", spin)
    if stop: o.add_session_config_entry("session.force_spinning_stop", "1")
    sessions[v] = ort.InferenceSession(g.SerializeToString(), o, providers=["CPUExecutionProvider"], disabled_optimizers=dis)
tok = formatting.load_tokenizer(f"{MODEL}/tokenizer.json")
qs, passages = questions(n)
feeds = {"standard": [], "shortcut": []}
for q in qs:
    for fmt in feeds:
        b = one_sequence.encode(tok, [(passages[q.passage_id], q.stem, q.alternatives)], fmt, 384)
        feeds[fmt].append(b.feeds(["input_ids", "attention_mask", "option_ids"]))
names = {i.name for i in sessions[variants[0]].get_inputs()}
res = {v: {f: [] for f in feeds} for v in variants}
diff = {v: 0.0 for v in variants}
for s in sessions.values(): s.run(["logits"], {k: x for k, x in feeds["standard"][0].items() if k in names})
for i in range(n):
    for fmt in feeds:
        f = {k: x for k, x in feeds[fmt][i].items() if k in names}
        order = variants[i % len(variants):] + variants[:i % len(variants)]
        outs = {}
        for v in order:
            t = time.perf_counter(); outs[v] = sessions[v].run(["logits"], f)[0]; res[v][fmt].append(time.perf_counter() - t)
        for v in variants: diff[v] = max(diff[v], float(np.abs(outs[v] - outs[variants[0]]).max()))
b0 = variants[0]
for v in variants:
    line = f"{v:28s}"
    for fmt in feeds:
        x = np.array(res[v][fmt]) * 1000
        r = np.median(np.array(res[b0][fmt]) / np.array(res[v][fmt]))
        line += f" | {fmt} med {np.median(x):6.1f} p95 {np.percentile(x,95):6.1f} x{r:.3f}"
    print(line + f" | max|dlogit| {diff[v]:.2e}")
print("load", os.getloadavg())
