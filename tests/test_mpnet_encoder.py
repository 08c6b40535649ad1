"""`models.training.mpnet` computes what transformers' MPNetModel computes, from the same weights.

A tiny random MPNet (transformers' own config class, saved offline) on real RACE dev
questions tokenized by the runtime's rules, padded to different lengths: the last hidden
states of the real tokens agree to float32 rounding, in eval mode."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="module")
def tiny_mpnet(tmp_path_factory):
    import shutil

    from models.training.mc_model import default_backbone

    config = transformers.MPNetConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=96, vocab_size=30522, max_position_embeddings=514)
    torch.manual_seed(0)
    d = tmp_path_factory.mktemp("mpnet") / "tiny"
    model = transformers.AutoModel.from_config(config)
    with torch.no_grad():  # a non-zero position bias, so that its bucketing is checked
        model.encoder.relative_attention_bias.weight.normal_(0, 1.0)
    model.save_pretrained(d)
    shutil.copy(default_backbone() / "tokenizer.json", d / "tokenizer.json")
    return d


def real_batch(max_length: int, fmt: str):
    from inference.formatting import encode_questions, load_tokenizer
    from models.training.dedup import read_race

    from models.training.mc_model import default_backbone

    passages = read_race(DATA / "race", "dev")[:3]
    qs = [(p.article, p.questions[0], p.options[0]) for p in passages]
    enc = encode_questions(load_tokenizer(default_backbone() / "tokenizer.json"), qs, fmt, max_length)
    return torch.from_numpy(enc.input_ids.reshape(-1, enc.input_ids.shape[-1])), \
        torch.from_numpy(enc.attention_mask.reshape(-1, enc.attention_mask.shape[-1]))


@pytest.mark.parametrize("max_length,fmt", [(64, "shortcut"), (512, "standard")])
def test_the_written_out_mpnet_matches_transformers(tiny_mpnet, max_length, fmt):
    from models.training.mpnet import load_pretrained

    ids, mask = real_batch(max_length, fmt)
    ids_hf = ids.clone()
    ids_hf[mask == 0] = 1  # transformers derives positions from MPNet's padding id
    hf = transformers.AutoModel.from_pretrained(tiny_mpnet, add_pooling_layer=False).float().eval()
    ours = load_pretrained(tiny_mpnet).eval()
    assert mask.sum(1).min() < mask.shape[1]  # some sequences are padded
    with torch.no_grad():
        a = hf(input_ids=ids_hf, attention_mask=mask).last_hidden_state
        b = ours(ids, mask)
    real = mask.bool()
    assert torch.allclose(a[real], b[real], atol=2e-5), float((a - b)[real].abs().max())


def test_the_position_bias_table_stays_as_pretrained(tiny_mpnet):
    from models.training.mpnet import load_pretrained

    enc = load_pretrained(tiny_mpnet)
    assert not enc.encoder.relative_attention_bias.weight.requires_grad
    assert all(p.requires_grad for n, p in enc.named_parameters() if "relative_attention_bias" not in n)
