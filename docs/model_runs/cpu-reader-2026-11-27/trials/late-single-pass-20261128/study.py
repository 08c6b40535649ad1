"""Screening: a second int8 pass on some MatMuls only. Logits vs the float rows of the files."""
import gzip, json, os, sys, time, tempfile
from pathlib import Path
variant, n = sys.argv[1], int(sys.argv[2])
def LAYERS(v):
    # "L0-5": second pass on every MatMul of layers 0..5; "L0-5+down": and every FFN down-projection
    spec, _, more = v[1:].partition("+")
    a, b = map(int, spec.split("-"))
    pats = tuple(f"l{i}_" for i in range(a, b + 1))
    return pats + ({"down": ("ffn_out_matmul",), "o": ("o_matmul",)}[more] if more else ())
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp()
PAT = {"int8x2": ("_matmul",), "int8": (), "down": ("ffn_out_matmul",), "down_o": ("ffn_out_matmul", "o_matmul"),
       "noqkv": ("o_matmul", "ffn_in_matmul", "ffn_out_matmul"), "down_in": ("ffn_out_matmul", "ffn_in_matmul"),
       "qkv_down": ("qkv_matmul", "ffn_out_matmul"), "pertoken": ()}.get(variant) or LAYERS(variant)
sys.path.insert(0, "/work/main")
import inference.cpu_recipes as cr
real = cr.derive
def per_token(model):
    """Each DynamicQuantizeLinear (per tensor, asymmetric) replaced by per-token symmetric u8 (zp 128)."""
    from onnx import helper, numpy_helper, TensorProto
    import numpy as np
    g = model.graph
    out = []
    consts = [numpy_helper.from_array(np.array(127.0, np.float32), "pt_127"),
              numpy_helper.from_array(np.array(128.0, np.float32), "pt_128f"),
              numpy_helper.from_array(np.array(1.0, np.float32), "pt_1"),
              numpy_helper.from_array(np.array(255.0, np.float32), "pt_255"),
              numpy_helper.from_array(np.array(1e-12, np.float32), "pt_eps"),
              numpy_helper.from_array(np.array(128, np.uint8), "pt_zp"),
              numpy_helper.from_array(np.array([-1], np.int64), "pt_axes")]
    for n in g.node:
        if n.op_type != "DynamicQuantizeLinear":
            out.append(n); continue
        x = n.input[0]; xq, xs, xzp = n.output; p = n.name
        out += [helper.make_node("Abs", [x], [p + "_abs"], name=p + "_abs"),
                helper.make_node("ReduceMax", [p + "_abs"], [p + "_amax"], name=p + "_amax", keepdims=1, axes=[-1]),
                helper.make_node("Max", [p + "_amax", "pt_eps"], [p + "_amax2"], name=p + "_amax2"),
                helper.make_node("Div", [p + "_amax2", "pt_127"], [xs], name=p + "_scale"),
                helper.make_node("Div", [x, xs], [p + "_xd"], name=p + "_xd"),
                helper.make_node("Round", [p + "_xd"], [p + "_xr"], name=p + "_xr"),
                helper.make_node("Add", [p + "_xr", "pt_128f"], [p + "_xa"], name=p + "_xa"),
                helper.make_node("Clip", [p + "_xa", "pt_1", "pt_255"], [p + "_xc"], name=p + "_xc"),
                helper.make_node("Cast", [p + "_xc"], [xq], name=p + "_cast", to=TensorProto.UINT8),
                helper.make_node("Identity", ["pt_zp"], [xzp], name=p + "_zp")]
    del g.node[:]; g.node.extend(out); g.initializer.extend(consts)
    return model

def derive(stored, recipe):
    if recipe == "int8" and variant == "pertoken":
        return per_token(cr.dynamic_int8(cr.merge_qkv(stored)))
    if recipe == "int8":
        return cr.dynamic_int8(cr.merge_qkv(stored), two_pass=PAT)
    return real(stored, recipe)
cr.derive = derive
os.environ["MCQLENS_CPU_RECIPE"] = "int8"
import inference
from inference.one_sequence import encode
ROOT = Path("/work/main"); RACE = ROOT / ".." / "shared" / "data" / "race"
rows = {}
for l in gzip.open(ROOT / "docs/model_runs/cpu-reader-2026-11-27/eval/float32_race-dev_384.jsonl.gz", "rt"):
    r = json.loads(l); rows[(r["id"], r["format"])] = r["logits"]
ids = sorted({k[0] for k in rows})[:: max(1, len({k[0] for k in rows}) // n)][:n]
model = inference.load_model(ROOT / "models/default", device="cpu", threads=2)
print(variant, model.runner.recipe, file=sys.stderr)
import numpy as np
agree = {"standard": 0, "shortcut": 0}; diff = {"standard": [], "shortcut": []}; t = {"standard": 0.0, "shortcut": 0.0}
for i in ids:
    f, j = i.split("#"); path = [RACE / f.split(":", 1)[1]]
    p = json.loads(path[0].read_text()); j = int(j)
    for fmt in ("standard", "shortcut"):
        enc = encode(model.tokenizer, [(p["article"], p["questions"][j], p["options"][j])], fmt, 384)
        s = time.perf_counter(); z = model.runner.logits_one(enc)[0][:4]; t[fmt] += time.perf_counter() - s
        ref = np.array(rows[(i, fmt)])
        agree[fmt] += int(np.argmax(z) == np.argmax(ref)); diff[fmt].append(float(np.max(np.abs(z - ref))))
print(json.dumps({"variant": variant, "n": len(ids), "agree": agree,
                  "maxdiff_mean": {k: float(np.mean(v)) for k, v in diff.items()},
                  "maxdiff_max": {k: float(np.max(v)) for k, v in diff.items()},
                  "ms_per_q": {k: 1000 * v / len(ids) for k, v in t.items()}, "load": os.getloadavg()[0]}))
