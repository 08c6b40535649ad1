"""Explain-like throughput: shortcut sequences one at a time on a 2-thread session vs two at a time."""
import os, sys, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np, onnx, onnxruntime as ort
sys.path.insert(0, "/work/main"); sys.path.insert(0, "/work/main/benchmarks")
from inference import cpu_recipes, option_attention, one_sequence, formatting
from inference.cpu_graph import DISABLED_OPTIMIZERS
from bench_inference import questions
MODEL = "/work/main/models/default"
g = cpu_recipes.derive(onnx.load(f"{MODEL}/model.int8.onnx"), "int8x2-first9", inplace=True)
option_attention.add(g, [9])
gb = g.SerializeToString()
def sess(intra, spin):
    o = ort.SessionOptions(); o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    o.intra_op_num_threads = intra
    o.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    if spin: o.add_session_config_entry("session.force_spinning_stop", "1")
    return ort.InferenceSession(gb, o, providers=["CPUExecutionProvider"], disabled_optimizers=list(DISABLED_OPTIMIZERS))
S2 = sess(2, True); S1 = sess(1, False); S2n = sess(2, False)
tok = formatting.load_tokenizer(f"{MODEL}/tokenizer.json")
n = int(sys.argv[1]) if len(sys.argv) > 1 else 120
qs, passages = questions(n)
names = [i.name for i in S2.get_inputs()]
feeds = []
for q in qs:
    b = one_sequence.encode(tok, [(passages[q.passage_id], q.stem, q.alternatives)], "shortcut", 384)
    feeds.append({k: v for k, v in b.feeds(["input_ids", "attention_mask", "option_ids"]).items() if k in names})
print("tokens median", np.median([f["input_ids"].shape[1] for f in feeds]))
for s in (S2, S1, S2n):
    for f in feeds[:5]: s.run(["logits"], f)
pool = ThreadPoolExecutor(2)
def seq(s):
    return [s.run(["logits"], f)[0] for f in feeds]
def par(s):
    return list(pool.map(lambda f: s.run(["logits"], f)[0], feeds))
res = {}
for rep in range(3):
    for name, fn in (("S2 seq", lambda: seq(S2)), ("S1 x2", lambda: par(S1)), ("S2nospin x2", lambda: par(S2n)), ("S2spin x2", lambda: par(S2))):
        t = time.perf_counter(); out = fn(); dt = time.perf_counter() - t
        res.setdefault(name, []).append(dt / len(feeds) * 1000)
        if name == "S2 seq": ref = out
        else:
            d = max(float(np.abs(a - b).max()) for a, b in zip(out, ref))
            res.setdefault(name + " maxdiff", []).append(d)
for k, v in res.items(): print(f"{k:22s}", " ".join(f"{x:.4g}" for x in v))
