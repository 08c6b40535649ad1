"""The GPU build's pure-Python parts on CPU: carrying files in parts, the data pack, the
evaluation summary (checked against the shipped model's out-of-fold numbers in
docs/models.md) and the plan of device steps."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from models import carry, evaluation, gpu_build

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
GRAPH = ROOT / "models" / "default" / "model.int8.onnx"  # a real 23.4 MB file
OOF = ROOT / "models" / "default" / "oof_predictions.jsonl"


def test_split_and_join_a_real_graph_in_parts_below_16_mib(tmp_path):
    manifest = carry.split(GRAPH, tmp_path / "parts", gpu_build.PART_BYTES)
    m = json.loads(manifest.read_text())
    assert len(m["parts"]) == -(-GRAPH.stat().st_size // gpu_build.PART_BYTES) == 2
    assert all((tmp_path / "parts" / p["name"]).stat().st_size < 16 * 1024 * 1024 for p in m["parts"])
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


def _oof_rows():
    rows = []
    for line in open(OOF, encoding="utf-8"):
        r = json.loads(line)
        rows.append({**r, "source": r["id"].split(":", 1)[0]})
    return rows


def test_summary_reproduces_the_shipped_models_out_of_fold_accuracy():
    rows = _oof_rows()
    dev = [r for r in rows if r["source"] == "expmrc"]  # stands in for dev here: the temperature rule
    s = evaluation.summarise(dev, rows)
    std, sc = s["formats"]["standard"], s["formats"]["shortcut"]
    # docs/models.md, "Accuracy per format": 40.5 [36.5, 44.6] and 35.5 [32.8, 38.2]; shortcut 38.3 and 32.5
    assert std["sets"]["expmrc"]["n"] == 561 and std["sets"]["embrace"]["n"] == 1165
    assert round(100 * std["sets"]["expmrc"]["accuracy"], 1) == 40.5
    assert [round(100 * x, 1) for x in std["sets"]["expmrc"]["ci95"]] == [36.5, 44.6]
    assert [round(100 * x, 1) for x in std["sets"]["embrace"]["ci95"]] == [32.8, 38.2]
    assert round(100 * sc["sets"]["expmrc"]["accuracy"], 1) == 38.3
    assert round(100 * sc["sets"]["embrace"]["accuracy"], 1) == 32.5
    # the seed's rule on "dev": after the temperature, mean max probability = accuracy
    import numpy as np

    from inference.metrics import softmax

    z, k = evaluation._arrays([r for r in dev if r["format"] == "standard"])
    p = softmax(z, std["temperature"])
    assert p.max(1).mean() == pytest.approx((z.argmax(1) == k).mean(), abs=1e-6)
    assert "shortcut_n_below_2" not in sc  # no RACE test rows here


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

    z, k = evaluation._arrays(rows)
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


def test_collect_brings_back_at_most_eight_files(tmp_path):
    final = tmp_path / "work" / "run" / "final"
    (final / "model").mkdir(parents=True)
    shutil.copy(GRAPH, final / "model" / "model.safetensors")  # stands in for a checkpoint: 2 parts
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
    from models import dedup, race_pack

    records, counts = race_pack.pack(DATA)
    race = counts["records"]
    # race/README.md: 87,866 train and 4,887 dev questions, minus what models.dedup removes
    assert race["train"] == {"race": 87866 - 526} and race["dev"] == {"race": 4887 - 28}
    assert race["eval"]["race"] == 4934 and race["eval"]["expmrc"] == 561 and race["eval"]["embrace"] == 1165
    held = set()
    for r in records:
        if r["role"] == "eval":
            held |= dedup.keys(r["passage"])
    assert not any(dedup.keys(r["passage"]) & held for r in records if r["role"] in ("train", "dev"))
