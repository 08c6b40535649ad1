import os, sys, time, resource, numpy as np, onnx, onnxruntime as ort
sys.path.insert(0, "/work/main")
from inference import cpu_recipes
from inference.cpu_graph import DISABLED_OPTIMIZERS
g = cpu_recipes.derive(onnx.load("/work/main/models/default/model.int8.onnx"), "int8x2-first9", inplace=True).SerializeToString()
for spin, stop in (("0", None), ("1", None), ("1", "1")):
    o = ort.SessionOptions(); o.intra_op_num_threads = 2; o.add_session_config_entry("session.intra_op.allow_spinning", spin)
    if stop: o.add_session_config_entry("session.force_spinning_stop", stop)
    s = ort.InferenceSession(g, o, providers=["CPUExecutionProvider"], disabled_optimizers=DISABLED_OPTIMIZERS)
    L = 45; f = {"input_ids": np.full((1, L), 100, np.int64), "attention_mask": np.ones((1, L), np.int64), "option_ids": np.repeat(np.arange(5), 9)[None].astype(np.int64)}
    for _ in range(5): s.run(["logits"], f)
    c0 = time.process_time(); w0 = time.perf_counter()
    s.run(["logits"], f); c1 = time.process_time(); w1 = time.perf_counter()
    time.sleep(1.0); c2 = time.process_time()
    print(f"spin={spin} stop={stop}: run wall {1000*(w1-w0):.1f} ms cpu {1000*(c1-c0):.1f} ms; cpu during 1 s idle after {1000*(c2-c1):.1f} ms")
    del s
