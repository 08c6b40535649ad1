"""Logit error and argmax agreement of graph variants against fp32 on RACE dev questions."""
import os, sys, time, json
import numpy as np, onnx, onnxruntime as ort
sys.path.insert(0, "/work/main"); sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/scratch/s2")
from inference import cpu_recipes, one_sequence, formatting
from inference.cpu_graph import DISABLED_OPTIMIZERS
from bench_inference import questions
import rowq
MODEL = "/work/main/models/default"
variants = sys.argv[1].split(";"); n = int(sys.argv[2]); skip = int(sys.argv[3]) if len(sys.argv) > 3 else 0
def build(v):
    rec, _, mod = v.partition("+")
    g = cpu_recipes.derive(onnx.load(f"{MODEL}/model.int8.onnx"), rec, inplace=True)
    if mod == "row": g = rowq.mutate(g)
    o = ort.SessionOptions(); o.intra_op_num_threads = 2; o.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(g.SerializeToString(), o, providers=["CPUExecutionProvider"], disabled_optimizers=DISABLED_OPTIMIZERS)
S = {v: build(v) for v in ["fp32"] + variants}
tok = formatting.load_tokenizer(f"{MODEL}/tokenizer.json")
qs, passages = questions(n + skip); qs = qs[skip:]
names = {i.name for i in S["fp32"].get_inputs()}
st = {v: {f: {"agree": 0, "err": [], "t": []} for f in ("standard", "shortcut")} for v in variants}
for i, q in enumerate(qs):
    for fmt in ("standard", "shortcut"):
        b = one_sequence.encode(tok, [(passages[q.passage_id], q.stem, q.alternatives)], fmt, 384)
        f = {k: x for k, x in b.feeds(["input_ids", "attention_mask", "option_ids"]).items() if k in names}
        ref = S["fp32"].run(["logits"], f)[0][0]
        for v in variants:
            t = time.perf_counter(); z = S[v].run(["logits"], f)[0][0]; st[v][fmt]["t"].append(time.perf_counter() - t)
            st[v][fmt]["agree"] += int(np.argmax(z) == np.argmax(ref)); st[v][fmt]["err"].append(float(np.abs(z - ref).max()))
for v in variants:
    print(v, " | ".join(f"{f}: agree {d['agree']}/{len(qs)} mean max|dz| {np.mean(d['err']):.4f} p95 {np.percentile(d['err'],95):.4f} med {1000*np.median(d['t']):.1f} ms" for f, d in st[v].items()))
