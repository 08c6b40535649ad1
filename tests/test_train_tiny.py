"""Train → package → load with the runtime, end to end on CPU with a tiny BERT and real DREAM/EMBRACE items.

The tiny backbone has MiniLM's tokenizer and random weights (2 layers, 32 wide), so the
whole chain runs in seconds; training itself is not what is tested, the plumbing is:
cross-fitted predictions, the seed's temperature rule on dev, a validated int8 export,
and a card the runtime accepts.
"""
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from models.training import checkpoint  # noqa: E402
from models.training.mc_model import BertConfig, build, default_backbone  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
TINY = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                  max_position_embeddings=128)


@pytest.fixture(scope="module")
def backbone(tmp_path_factory):
    """A Hugging Face-style BERT directory with random tiny weights and MiniLM's tokenizer."""
    from dataclasses import asdict

    from safetensors.torch import save_file

    d = tmp_path_factory.mktemp("tiny_backbone")
    enc = build(None, TINY, seed=0).encoder
    save_file({k: v.contiguous() for k, v in enc.state_dict().items()}, str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps({"model_type": "bert", **asdict(TINY)}))
    (d / "tokenizer.json").write_bytes((default_backbone() / "tokenizer.json").read_bytes())
    return d


@pytest.fixture(scope="module")
def run_dir(backbone, tmp_path_factory):
    from models.training.train import main

    out = tmp_path_factory.mktemp("run")
    main(["--data", str(DATA / "dream" / "dev.json"), str(DATA / "embrace" / "embrace_green.jsonl"),
          "--out", str(out), "--backbone", str(backbone), "--crossfit", "2", "--epochs", "2",
          "--limit", "48", "--max-length", "96", "--device", "cpu", "--no-progress"])
    return out


def test_crossfit_run_writes_out_of_fold_predictions(run_dir):
    rows = [json.loads(line) for line in open(run_dir / "oof_predictions.jsonl")]
    assert rows and {r["format"] for r in rows} == {"standard", "shortcut"}
    assert {r["fold"] for r in rows} == {0, 1}
    for r in rows:
        assert r["id"].startswith("embrace:") and len(r["logits"]) == 4
    summary = json.loads((run_dir / "summary.json").read_text())
    assert set(summary["runs"]) == {"0", "1", "final"}
    # early stopping keeps the best dev epoch; the history says what happened
    hist = summary["runs"]["final"]["history"]
    assert 1 <= len(hist) <= 2 and all("dev" in h for h in hist)


def test_package_exports_a_model_the_runtime_loads(run_dir, tmp_path):
    import inference
    from desktop.formats import dream
    from inference.metrics import T_MAX, T_MIN, mean_max_probability
    from models.export.package import package
    from models.training.predictions import arrays, by_format, read_rows

    out = tmp_path / "model"
    card = package(run_dir, out, [str(DATA / "dream" / "dev.json")], n_validation=12, command="pytest")
    assert set(card.formats) == {"standard", "shortcut"} and card.files == {"int8": "model.int8.onnx"}
    assert card.extra["export"]["max_abs_diff_fp32"] <= 1e-3
    assert card.extra["export"]["int8_agreement"] >= 0.99
    # the seed's rule: on dev, mean maximum probability equals accuracy at the card's temperature
    dev = by_format(read_rows(run_dir / "final" / "predictions.jsonl", "dev"))
    for fmt, t in card.temperature.items():
        _, z, keys = arrays(dev[fmt])
        acc = float((z.argmax(1) == keys).mean())
        if T_MIN < t < T_MAX:  # a random tiny model may be too flat for any T to reach its accuracy
            assert mean_max_probability(z, t) == pytest.approx(acc, abs=1e-3)
    # out-of-fold predictions stay with the run: the runtime serves nothing but the model
    assert sorted(p.name for p in out.iterdir()) == ["card.json", "model.int8.onnx", "tokenizer.json"]
    assert card.metrics["out_of_fold"]["standard"]["questions"] > 0
    model = inference.load_model(out, device="cpu")
    ds = dream.read(DATA / "dream" / "dev.json")
    qs = [q for p in ds.passages[:3] for q in p.questions]
    scores = inference.score(model, qs, {p.id: p for p in ds.passages[:3]}, ["standard", "shortcut"])
    for s in scores:
        p = np.array(s.formats["standard"].probabilities)
        assert p.sum() == pytest.approx(1.0) and len(p) == 3


def test_checkpoint_round_trip_is_exact(backbone, tmp_path):
    model = build(backbone, seed=1, pooling="mean")
    checkpoint.save(model, tmp_path / "ck", backbone)
    again = checkpoint.load(tmp_path / "ck")
    ids = torch.randint(1000, 2000, (2, 3, 12))
    mask, types = torch.ones_like(ids), torch.zeros_like(ids)
    model.eval()
    # fp16 storage: logits agree to fp16 precision of the weights
    assert torch.allclose(model(ids, mask, types), again(ids, mask, types), atol=2e-2)
    assert again.pooling == "mean"
