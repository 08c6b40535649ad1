"""Per-group screening: the second int8 pass on every MatMul but one group (layer, kind); error vs float."""
import gzip, json, os, sys, tempfile, time
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main")
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp()
os.environ["MCQLENS_CPU_RECIPE"] = "int8"
import inference.cpu_recipes as cr
KINDS = ("qkv", "o", "ffn_in", "ffn_out")
ALL = [f"l{i}_{k}_matmul" for i in range(12) for k in KINDS]
current = {"pats": tuple(ALL)}
def derive(stored, recipe):
    return cr.dynamic_int8(cr.merge_qkv(stored), two_pass=current["pats"])
cr.derive = derive
import inference
from inference.one_sequence import encode
ROOT = Path("/work/main"); RACE = ROOT / ".." / "shared" / "data" / "race"
rows = {}
for l in gzip.open(ROOT / "docs/model_runs/cpu-reader-2026-11-27/eval/float32_race-dev_384.jsonl.gz", "rt"):
    r = json.loads(l); rows[(r["id"], r["format"])] = r["logits"]
n = int(sys.argv[1]); offset = int(sys.argv[2]) if len(sys.argv) > 2 else 0
allids = sorted({k[0] for k in rows})
ids = allids[offset:: max(1, len(allids) // n)][:n]
tok = None; encs = []
def run(pats):
    global tok
    current["pats"] = tuple(pats)
    model = inference.load_model(ROOT / "models/default", device="cpu", threads=2)
    if not encs:
        for i in ids:
            f, j = i.split("#"); p = json.loads((RACE / f.split(":", 1)[1]).read_text()); j = int(j)
            for fmt in ("standard", "shortcut"):
                encs.append((i, fmt, encode(model.tokenizer, [(p["article"], p["questions"][j], p["options"][j])], fmt, 384)))
    d = {"standard": [], "shortcut": []}; ag = {"standard": 0, "shortcut": 0}
    for i, fmt, enc in encs:
        z = model.runner.logits_one(enc)[0][:4]; ref = np.array(rows[(i, fmt)])
        d[fmt].append(float(np.max(np.abs(z - ref)))); ag[fmt] += int(np.argmax(z) == np.argmax(ref))
    return {k: float(np.mean(v)) for k, v in d.items()}, ag
mode = sys.argv[3] if len(sys.argv) > 3 else "each"
if mode == "each":
    base, _ = run(ALL); print(json.dumps({"drop": None, "err": base}), flush=True)
    for g in ALL:
        e, ag = run([p for p in ALL if p != g]); print(json.dumps({"drop": g, "err": e, "agree": ag}), flush=True)
else:  # a given set dropped (comma list)
    drop = set(mode.split(","))
    e, ag = run([p for p in ALL if p not in drop]); print(json.dumps({"drop": sorted(drop), "n": len(ids), "err": e, "agree": ag}), flush=True)
