"""The m6 part with and without the [unusedN] rows: the product's logits on RACE dev, compared."""
import json, os, sys, time
import numpy as np
import inference
from inference.one_sequence import encode
from models.training.data import read_jsonl
recipe = sys.argv[1]; limit_std = int(sys.argv[2]); limit_sc = int(sys.argv[3]) if len(sys.argv) > 3 else None
os.environ["MCQLENS_CPU_RECIPE"] = recipe
recs = [r for r in read_jsonl("/work/carry/race.jsonl.xz") if r["role"] == "dev"]
a = inference.load_model("/work/m6model", device="cpu", threads=1)
b = inference.load_model("/work/m6pruned", device="cpu", threads=1)
out = {"recipe": a.runner.recipe, "cpu_flags_vnni": None}
from inference import cpu_recipes
out["cpu_flags_vnni"] = cpu_recipes.has_vnni()
ids_in_gap = 0
gaps = [(5, 104), (108, 1003)]
for fmt, rs in (("shortcut", recs[:limit_sc]), ("standard", recs[:limit_std])):
    worst, same, t0 = 0.0, 0, time.time()
    for r in rs:
        enc = encode(a.tokenizer, [(r["passage"], r["stem"], r["alternatives"])], fmt, 384)
        ids = enc.input_ids[0]
        ids_in_gap += int(sum(((ids >= s) & (ids < e)).sum() for s, e in gaps))
        za, zb = a.runner.logits_one(enc)[0], b.runner.logits_one(enc)[0]
        worst = max(worst, float(np.abs(za - zb).max()))
        same += int(np.array_equal(za, zb))
    out[fmt] = {"questions": len(rs), "identical": same, "largest_difference": worst, "s": round(time.time() - t0, 1)}
out["token_ids_in_the_left_out_rows"] = ids_in_gap
probe = "[unused0] [unused5] [CLS] [SEP] [MASK] [UNK] 😀 漢字 naïve"
out["probe_ids"] = a.tokenizer.encode(probe).ids
print(json.dumps(out))
