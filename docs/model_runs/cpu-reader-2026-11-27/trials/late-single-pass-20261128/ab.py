"""Interleaved A/B: the product's score() of one question, both formats and shortcut alone, per recipe."""
import os, sys, time, tempfile, json
import numpy as np
sys.path.insert(0, "/work/main"); sys.path.insert(0, "/work/main/benchmarks")
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp()
import inference
from bench_inference import questions
recipes = sys.argv[1].split(","); n = int(sys.argv[2]); model_dir = sys.argv[3] if len(sys.argv) > 3 else "/work/main/models/default"
models = {}
for r in recipes:
    rec, _, th = r.partition("@")  # "int8x2@1": that recipe on 1 thread
    os.environ["MCQLENS_CPU_RECIPE"] = rec
    models[r] = inference.load_model(model_dir, device="cpu", threads=int(th or 2))
    assert models[r].runner.recipe == rec
qs, passages = questions(n)
for m in models.values(): inference.score(m, [qs[0]], passages, ["standard", "shortcut"], evidence=None)
both = {r: [] for r in recipes}; sc = {r: [] for r in recipes}
for i, q in enumerate(qs[1:]):
    order = recipes[i % len(recipes):] + recipes[:i % len(recipes)]
    for r in order:
        t = time.perf_counter(); inference.score(models[r], [q], passages, ["standard", "shortcut"], evidence=None); both[r].append(time.perf_counter() - t)
    for r in order:
        t = time.perf_counter(); inference.score(models[r], [q], passages, ["shortcut"], evidence=None); sc[r].append(time.perf_counter() - t)
base = recipes[0]
for r in recipes:
    b = np.array(both[r]) * 1000; s = np.array(sc[r]) * 1000
    ratio = np.median(np.array(both[base]) / np.array(both[r]))
    print(f"{r:16s} both med {np.median(b):6.1f} p95 {np.percentile(b,95):6.1f} | shortcut med {np.median(s):5.1f} p95 {np.percentile(s,95):5.1f} | paired speed-up vs {base}: {ratio:.3f}")
print("load", os.getloadavg())
print(json.dumps({"both_ms": both, "shortcut_ms": sc}))
