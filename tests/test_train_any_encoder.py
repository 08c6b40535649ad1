"""`mcqlens train` with any Hugging Face encoder family (BERT, MPNet, RoBERTa, ELECTRA, DeBERTa),
with or without segment ids: tiny random configs built offline from transformers' config
classes, trained for a few steps on CPU on real DREAM items, saved and loaded back."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from models.training import checkpoint  # noqa: E402
from models.training.mc_model import HFEncoder, default_backbone  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=30522)
# family: (config class, extra settings, segment ids used?)
FAMILIES = {
    "bert": ("BertConfig", dict(max_position_embeddings=128, type_vocab_size=2), True),
    "mpnet": ("MPNetConfig", dict(max_position_embeddings=130), False),
    "roberta": ("RobertaConfig", dict(max_position_embeddings=130, type_vocab_size=1), False),
    "electra": ("ElectraConfig", dict(max_position_embeddings=128, embedding_size=32, type_vocab_size=2), True),
    "deberta-v2": ("DebertaV2Config", dict(max_position_embeddings=128, type_vocab_size=0), False),
}


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """24 real DREAM test questions (role train) and 8 DREAM dev ones, packed as `models.training.data` packs
    them: every training process then reads 32 records, not two DREAM files."""
    from models.training.data import load_records, write_jsonl

    recs = load_records([str(DATA / "dream" / "dev.json"), str(DATA / "dream" / "test.json")])
    train = [r for r in recs if r["role"] == "train"][:24]
    dev = [r for r in recs if r["role"] == "dev"][:8]
    path = tmp_path_factory.mktemp("packed") / "dream.jsonl"
    write_jsonl(train + dev, path)
    return path


def backbone_dir(root: Path, family: str) -> Path:
    cls_name, extra, _ = FAMILIES[family]
    config = getattr(transformers, cls_name)(**SMALL, **extra)
    torch.manual_seed(0)
    d = root / family
    transformers.AutoModel.from_config(config).save_pretrained(d)
    shutil.copy(default_backbone() / "tokenizer.json", d / "tokenizer.json")
    return d


pytestmark = pytest.mark.slow  # torch + transformers imports; training itself takes a second


@pytest.mark.parametrize("family", list(FAMILIES))
def test_train_a_few_steps_with_each_encoder_family(family, tmp_path, packed):
    from models.training.train import main

    d = backbone_dir(tmp_path, family)
    out = tmp_path / "run"
    main(["--data", str(packed), "--out", str(out), "--backbone", str(d), "--crossfit", "1",
          "--epochs", "1", "--limit", "8", "--max-length", "48", "--batch-size", "4", "--device", "cpu",
          "--pooling", "mean", "--no-progress"])
    metrics = json.loads((out / "final" / "metrics.json").read_text())
    assert metrics["n_train"] == 8 and metrics["history"][0]["steps"] >= 4
    assert metrics["training"]["processes"] == 1 and metrics["training"]["gpus"] == 0
    assert metrics["training"]["train_questions"] == 2 * 8  # standard + shortcut, one epoch
    model = checkpoint.load(out / "final" / "model")
    enc = model.encoder
    if family == "bert":
        assert not isinstance(enc, HFEncoder)  # the classic BERT: exported with fused attention
    elif family == "mpnet":  # written out (models.training.mpnet): fused attention with its position bias
        from models.training.mpnet import MPNetEncoder

        assert isinstance(enc, MPNetEncoder) and not enc.uses_token_types
    else:
        assert isinstance(enc, HFEncoder) and enc.uses_token_types == FAMILIES[family][2]
        assert enc.config.model_type == family
    # the saved fp16 weights come back: the loaded model scores like the trained one did on dev
    rows = [json.loads(line) for line in open(out / "final" / "predictions.jsonl")]
    assert rows and all(len(r["logits"]) == 3 for r in rows)  # DREAM: 3 alternatives
    ids = torch.randint(1000, 2000, (2, 3, 12))
    with torch.no_grad():
        logits = model(ids, torch.ones_like(ids), torch.zeros_like(ids))
    assert logits.shape == (2, 3) and torch.isfinite(logits).all()


def test_torchrun_two_processes_on_cpu_end_with_the_same_weights(tmp_path, packed):
    d = backbone_dir(tmp_path, "mpnet")
    out = tmp_path / "ddp"
    # torchrun as a module of the running interpreter: a `torchrun` on PATH may be another environment's
    cmd = [sys.executable, "-m", "torch.distributed.run"] + [
        "--nproc_per_node", "2", "--standalone", "-m", "models.training.train",
        "--data", str(packed), "--out", str(out),
        "--backbone", str(d), "--crossfit", "1",
        "--epochs", "1", "--limit", "24", "--max-length", "48", "--batch-size", "4", "--device", "cpu",
        "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    digests = [(out / "final" / f"weights_rank{r}.sha256").read_text() for r in (0, 1)]
    assert digests[0] == digests[1]
    metrics = json.loads((out / "final" / "metrics.json").read_text())
    assert metrics["training"]["processes"] == 2
    # 24 questions × 2 formats in batches of ≤ 4: each rank ran half the batches
    assert metrics["training"]["train_questions"] <= 48 and metrics["history"][0]["steps"] >= 6
    cfg = json.loads((out / "final" / "model" / "config.json").read_text())
    assert cfg["training"]["processes"] == 2 and cfg["training"]["train_s"] > 0
