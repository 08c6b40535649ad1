import sys, time, statistics
sys.path.insert(0, "/work/main")
import numpy as np
import inference
from desktop import formats
from inference import giveaway as G
questions = [q for d in formats.read("/work/shared/data/race/test") for q in d.questions()]
step = max(1, len(questions) // 60)
sample = questions[::step][:60][:30]
model = inference.load_model("/work/main/models/default", device="cpu")
r = model.runner
G.explain(model, sample[:1])
times = {1: [], 2: []}
for i, q in enumerate(sample):
    for w in ((1, 2) if i % 2 else (2, 1)):
        r.side_workers = w
        t = time.perf_counter(); e = G.explain(model, [q]); times[w].append(time.perf_counter() - t)
for w, ts in times.items():
    print(w, "median %.3f p95 %.3f max %.3f" % (statistics.median(ts), np.percentile(ts, 95), max(ts)))
print("paired ratio median", statistics.median(a / b for a, b in zip(times[1], times[2])))
