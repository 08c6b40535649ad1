"""The standard format's time per question under several CPU recipes, in turns (each question
through every recipe, the order rotating), through the product's runner: python recipe_speed.py N R1 R2 ..."""
import json, os, platform, sys, time
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
import numpy as np
import inference
from inference.one_sequence import encode
from bench_inference import questions

n, recipes = int(sys.argv[1]), sys.argv[2:]
models = {}
for r in recipes:
    os.environ["MCQLENS_CPU_RECIPE"] = r
    models[r] = inference.load_model("models/default", device="cpu", threads=2)
    assert models[r].runner.recipe == r, (r, models[r].runner.recipe)
qs, passages = questions(n)
feeds = []
for q in qs:
    feeds.append(encode(models[recipes[0]].tokenizer, [(passages[q.passage_id], q.stem, q.alternatives)], "standard", 384))
for r in recipes:  # one warm run each
    models[r].runner.logits_one(feeds[0])
times = {r: [] for r in recipes}
for i, f in enumerate(feeds):
    order = recipes[i % len(recipes):] + recipes[: i % len(recipes)]
    for r in order:
        t = time.perf_counter(); models[r].runner.logits_one(f); times[r].append(1000 * (time.perf_counter() - t))
base = recipes[0]
out = {"cpu": platform.processor() or open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0],
       "questions": len(feeds), "median_ms": {r: float(np.median(v)) for r, v in times.items()},
       "median_ratio_to_" + base: {r: float(np.median(np.array(times[base]) / np.array(v))) for r, v in times.items()}}
print(json.dumps(out, indent=1))
