"""Which MatMuls need the second int8 pass: logit error against the float model of the files, RACE dev."""
import os, sys, time
import numpy as np, onnx, onnxruntime as ort
sys.path.insert(0, "/work/main"); sys.path.insert(0, "/work/main/benchmarks")
from inference import cpu_recipes, one_sequence, formatting
from inference.cpu_graph import DISABLED_OPTIMIZERS
from bench_inference import questions
MODEL = "/work/main/models/default"
L = lambda kinds, layers=range(12): tuple(f"l{i}_{k}_matmul" for i in layers for k in kinds)
VARIANTS = {
    "int8": (),
    "first9": cpu_recipes.SECOND_PASS["int8x2-first9"],
    "ffn_out": L(["ffn_out"]),
    "ffn_out+ffn_in": L(["ffn_out", "ffn_in"]),
    "ffn_out+o": L(["ffn_out", "o"]),
    "ffn_out+first3": L(["ffn_out"]) + L(cpu_recipes.KINDS, range(3)),
    "ffn_out+qkv": L(["ffn_out", "qkv"]),
}
MAC = {"qkv": 3 * 768 * 768, "o": 768 * 768, "ffn_in": 768 * 3072, "ffn_out": 3072 * 768}
stored = onnx.load(f"{MODEL}/model.int8.onnx")
def sess(g):
    o = ort.SessionOptions(); o.intra_op_num_threads = 2
    return ort.InferenceSession(g.SerializeToString(), o, providers=["CPUExecutionProvider"], disabled_optimizers=list(DISABLED_OPTIMIZERS))
ref = sess(cpu_recipes.derive(stored, "fp32"))
ss = {}
for v, tp in VARIANTS.items():
    g = cpu_recipes.dynamic_int8(cpu_recipes.merge_qkv(stored), two_pass=tp, name=v)
    ss[v] = sess(g)
    second = sum(MAC[k] for k in MAC for i in range(12) if any(p in f"l{i}_{k}_matmul" for p in tp) or tp == ("_matmul",))
    print(f"{v:18s} second-pass MACs/token {second/1e6:5.1f} M (one pass: {12*sum(MAC.values())/1e6:.1f} M)", flush=True)
tok = formatting.load_tokenizer(f"{MODEL}/tokenizer.json")
n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
qs, passages = questions(n)
names = [i.name for i in ref.get_inputs()]
err = {v: {f: [] for f in ("standard", "shortcut")} for v in VARIANTS}
flip = {v: {f: 0 for f in ("standard", "shortcut")} for v in VARIANTS}
for q in qs:
    for fmt in ("standard", "shortcut"):
        f = {k: x for k, x in one_sequence.encode(tok, [(passages[q.passage_id], q.stem, q.alternatives)], fmt, 384).feeds(["input_ids", "attention_mask", "option_ids"]).items() if k in names}
        z0 = ref.run(["logits"], f)[0][0]
        for v, s in ss.items():
            z = s.run(["logits"], f)[0][0]
            err[v][fmt].append(float(np.abs(z - z0).max())); flip[v][fmt] += int(np.argmax(z) != np.argmax(z0))
for v in VARIANTS:
    print(f"{v:18s}", " | ".join(f"{fmt} max|dz| mean {np.mean(e):.4f} p95 {np.percentile(e,95):.4f} flips {flip[v][fmt]}" for fmt, e in err[v].items()))
