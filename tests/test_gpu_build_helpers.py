"""The GPU build's pure-Python parts on CPU: carrying files in parts, the data pack, the
evaluation summary (checked against the shipped model's evaluation record, from its rows)
and the plan of device steps."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from models.evaluation import summary as evaluation
from models.shipping import carry, gpu_build

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
GRAPH = ROOT / "tests" / "data" / "tiny_model" / "model.int8.onnx"  # a real graph file (1 MB)
RUN = ROOT / "docs" / "model_runs" / "mpnet-4xh100-2026-11-27"  # the shipped model's build records


def test_split_and_join_a_real_graph_in_parts_below_16_mib(tmp_path):
    assert gpu_build.PART_BYTES < 16 * 1024 * 1024  # what a device call brings back
    part = GRAPH.stat().st_size // 2 + 1  # the tiny graph in two parts, as a checkpoint in many
    manifest = carry.split(GRAPH, tmp_path / "parts", part)
    m = json.loads(manifest.read_text())
    assert len(m["parts"]) == 2
    assert all((tmp_path / "parts" / p["name"]).stat().st_size <= part for p in m["parts"])
    joined = carry.join(manifest, tmp_path / "joined.onnx")
    assert joined.read_bytes() == GRAPH.read_bytes()
    # a damaged part is named, and nothing is left behind
    part = tmp_path / "parts" / m["parts"][1]["name"]
    data = bytearray(part.read_bytes())
    data[100] ^= 1
    part.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="part001"):
        carry.join(manifest, tmp_path / "again.onnx")
    assert not (tmp_path / "again.onnx").exists() and not list(tmp_path.glob("*.joining"))


def _close(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9, abs=1e-12)
    return a == b


def test_summary_reproduces_the_shipped_models_evaluation_record():
    import gzip

    rows = [json.loads(line) for line in gzip.open(RUN / "eval_rows.jsonl.gz", "rt", encoding="utf-8")]
    dev = [r for r in rows if r["role"] == "dev"]
    s = evaluation.summarise(dev, [r for r in rows if r["role"] == "eval"])
    # the record the GPU machine wrote from the same rows (evaluation.json), figure for figure
    recorded = json.loads((RUN / "evaluation.json").read_text(encoding="utf-8"))
    # figure for figure; floats to 1e-9 (a sum's last digit depends on the numpy build's order)
    assert _close(s["formats"], recorded["formats"])
    std, sc = s["formats"]["standard"], s["formats"]["shortcut"]
    # docs/models.md: RACE test 67.0 [65.7, 68.3] standard, 47.9 [46.5, 49.3] shortcut; 353 with N < 2
    assert std["sets"]["race-test"]["n"] == 4934 and std["sets"]["expmrc"]["n"] == 561
    assert [round(100 * x, 1) for x in std["sets"]["race-test"]["ci95"]] == [65.7, 68.3]
    assert round(100 * sc["sets"]["race-test"]["accuracy"], 1) == 47.9
    assert sc["shortcut_n_below_2"]["n"] == 353
    # the seed's rule on dev: after the temperature, mean max probability = accuracy
    from inference.metrics import softmax

    z, k = evaluation.logit_arrays([r for r in dev if r["format"] == "standard"])
    p = softmax(z, std["temperature"])
    assert p.max(1).mean() == pytest.approx((z.argmax(1) == k).mean(), abs=1e-6)


def test_race_test_rows_count_by_level_and_shortcut_n_below_2():
    rows = [{"id": "race:test/high/1.txt#0", "source": "race", "level": "high", "format": "shortcut", "key": 0,
             "logits": [9.0, 0.0, 0.0, 0.0]},
            {"id": "race:test/middle/2.txt#0", "source": "race", "level": "middle", "format": "shortcut", "key": 1,
             "logits": [0.0, 0.1, 0.0, 0.0]},
            {"id": "race:test/middle/2.txt#1", "source": "race", "level": "middle", "format": "shortcut", "key": 2,
             "logits": [8.0, 0.0, 0.0, 0.0]}]
    s = evaluation.summarise(rows, rows)["formats"]["shortcut"]
    assert {k: v["n"] for k, v in s["sets"].items()} == {"race-test-high": 1, "race-test-middle": 2, "race-test": 3}
    # N < 2 after the temperature fitted on these rows; recomputed here from N = 2^H
    import numpy as np

    from inference.metrics import entropy_bits, softmax

    z, k = evaluation.logit_arrays(rows)
    p = softmax(z, s["temperature"])
    low = 2 ** entropy_bits(p) < 2
    assert s["shortcut_n_below_2"]["n"] == int(low.sum())


def test_plan_trains_under_torchrun_and_never_on_test(tmp_path):
    class A:
        gpus, backbone, data, work, scaling_steps, stop_after = 4, "carry/mpnet", "carry/race.jsonl.gz", \
            str(tmp_path), 50, 420
    steps = gpu_build.plan(A)
    names = [n for n, _ in steps]
    assert names == ["throughput-1gpu", "throughput-4gpu", "train", "evaluate"]
    train = dict(steps)["train"]
    assert train[1:4] == ["-m", "torch.distributed.run", "--standalone"] and "--nproc_per_node" in train
    assert train[train.index("--nproc_per_node") + 1] == "4" and train[train.index("--crossfit") + 1] == "1"
    assert "--stop-after" in train


def test_collect_brings_back_at_most_eight_files(tmp_path, monkeypatch):
    final = tmp_path / "work" / "run" / "final"
    (final / "model").mkdir(parents=True)
    shutil.copy(GRAPH, final / "model" / "model.safetensors")  # stands in for a checkpoint: 2 parts
    monkeypatch.setattr(gpu_build, "PART_BYTES", GRAPH.stat().st_size // 2 + 1)
    (final / "metrics.json").write_text("{}")
    (final / "model" / "config.json").write_text("{}")
    left = gpu_build.collect(tmp_path / "work", tmp_path / "out", max_files=4)
    got = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(got) == 4 and left == ["model.safetensors.part001"]
    left = gpu_build.collect(tmp_path / "work", tmp_path / "out2", parts_from=1)
    assert left == [] and sorted(p.name for p in (tmp_path / "out2").iterdir()) == \
        ["model.safetensors.manifest.json", "model.safetensors.part001"]


@pytest.mark.slow
def test_the_pack_trains_on_deduplicated_race_only():
    from models.training import dedup, race_pack

    records, counts = race_pack.pack(DATA)
    race = counts["records"]
    # race/README.md: 87,866 train and 4,887 dev questions, minus what models.training.dedup removes
    assert race["train"] == {"race": 87866 - 526} and race["dev"] == {"race": 4887 - 28}
    assert race["eval"]["race"] == 4934 and race["eval"]["expmrc"] == 561 and race["eval"]["embrace"] == 1165
    held = set()
    for r in records:
        if r["role"] == "eval":
            held |= dedup.keys(r["passage"])
    assert not any(dedup.keys(r["passage"]) & held for r in records if r["role"] in ("train", "dev"))
