"""Four processes load the model at the same moment, with an empty cache, and each scores a question
(issue 30: two processes that loaded the model at once — a screenshot and a benchmark — once died
in ONNX Runtime's session set-up, "Invalid tensor data type 2", exit 134).

The tiny test model's graph is rewritten into its CPU layout on first load and cached
($XDG_CACHE_HOME/mcqlens/<model id>/, `inference.cpu_graph`); every process here finds the cache
empty and writes it.  Each writes through a file of its own renamed into place, so no process
ever reads another's half-written graph: all four load, score the same numbers, and leave only
whole files behind.  The one-sequence tiny model (int8 rows, derived in memory) loads beside them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[1]
MODELS = {"tiny_model": ROOT / "tests" / "data" / "tiny_model", "tiny_oneseq": ROOT / "tests" / "data" / "tiny_oneseq"}
PROCESSES = 4

# Each process says it is ready, waits until all are, then loads and scores at once.
SCRIPT = r"""
import json, sys, time
from pathlib import Path
model_dir, gate, me, n = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
import inference
from desktop.domain.model import Question
(gate / f"ready-{me}").touch()
deadline = time.monotonic() + 120
while len(list(gate.glob("ready-*"))) < n and time.monotonic() < deadline:
    time.sleep(0.005)
model = inference.load_model(model_dir, device="cpu")
q = Question(id="p-0", passage_id="p", index=0, stem="Where did Tom go after school?",
             alternatives=["To the park", "To the library", "Home", "To his friend's house"], key=1)
text = "After school Tom walked to the library, where he read about ships until six."
(result,) = inference.score(model, [q], {"p": text}, evidence=None)
print(json.dumps({"message": model.message,
                  "probabilities": {f: s.probabilities for f, s in result.formats.items()}}))
"""


@pytest.mark.parametrize("name", sorted(MODELS))
def test_four_processes_load_the_model_at_once_with_an_empty_cache(tmp_path, name):
    cache = tmp_path / "cache"  # empty: every process derives what it needs
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "MCQLENS_THREADS": "1",
           "PYTHONPATH": str(ROOT)}
    env.pop("MCQLENS_CPU_LAYOUT", None)
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(MODELS[name]), str(gate), str(i), str(PROCESSES)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(PROCESSES)]
    done = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, done):
        assert p.returncode == 0, f"exit {p.returncode}: {err[-2000:]}"
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in done]
    # the same graph, the same numbers, in every process
    assert all(r["probabilities"] == results[0]["probabilities"] for r in results)
    assert all(len(ps) == 4 and abs(sum(ps) - 1) < 1e-6 for ps in results[0]["probabilities"].values())
    # no process fell back to the shipped graph because another's cache file was half written
    assert not any("not used" in r["message"] or "damaged" in r["message"] for r in results), \
        [r["message"] for r in results]
    left = sorted(p.name for p in cache.rglob("*") if p.is_file())
    assert not [f for f in left if "partial" in f], left
    if name == "tiny_model":  # its CPU layout and the record of it, each whole
        assert [f for f in left if f.endswith(".onnx")] and [f for f in left if f.endswith(".json")], left
        for f in cache.rglob("*.json"):
            json.loads(f.read_text(encoding="utf-8"))
        import onnx

        for f in cache.rglob("*.onnx"):
            onnx.checker.check_model(onnx.load(str(f)))
