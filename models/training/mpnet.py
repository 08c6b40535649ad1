"""MPNet written out for speed: the same weights and function as transformers' `MPNetModel`.

transformers' MPNet computes attention eagerly (softmax(QK^T/sqrt(d) + bias + mask) V with
every [seqs, heads, T, T] tensor kept for the backward pass).  Here attention goes through
`scaled_dot_product_attention` with MPNet's relative position bias and the padding mask
added into one float mask, so PyTorch takes its memory-efficient fused kernel on a GPU
(flash attention takes no bias).  The bias table (32 buckets x heads, 384 numbers) is kept
as pretrained: a mask that needs a gradient would send the kernel back to the eager path.

Parameter names are those of `MPNetModel` (without the pooler), so Hugging Face
checkpoints load as they are, and `models.export.mpnet_onnx` builds the ONNX graph from the same
state dict.  Position ids are 2, 3, ... for the tokens of a right-padded sequence, as
transformers derives them from the padding id.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

PADDING_IDX = 1  # MPNet's <pad>; positions start after it
NUM_BUCKETS = 32
MAX_DISTANCE = 128


@dataclass
class MPNetConfig:
    vocab_size: int = 30527
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 514
    relative_attention_num_buckets: int = NUM_BUCKETS
    layer_norm_eps: float = 1e-5
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    pad_token_id: int = PADDING_IDX

    @classmethod
    def from_dict(cls, data: dict) -> "MPNetConfig":
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})

    def to_dict(self) -> dict:
        return {"model_type": "mpnet", **{f.name: getattr(self, f.name) for f in fields(self)}}


def relative_buckets(length: int, num_buckets: int = NUM_BUCKETS, max_distance: int = MAX_DISTANCE) -> torch.Tensor:
    """[T, T] bucket of each (query, key) offset, exactly as transformers' MPNet computes it."""
    pos = torch.arange(length, dtype=torch.long)
    rel = pos[None, :] - pos[:, None]
    return bucket_of(rel, num_buckets, max_distance)


def bucket_of(relative_position: torch.Tensor, num_buckets: int = NUM_BUCKETS,
              max_distance: int = MAX_DISTANCE) -> torch.Tensor:
    n = -relative_position
    half = num_buckets // 2
    ret = (n < 0).to(torch.long) * half
    n = n.abs()
    max_exact = half // 2
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (half - max_exact)).to(torch.long)
    large = torch.minimum(large, torch.full_like(large, half - 1))
    return ret + torch.where(n < max_exact, n, large)


class Embeddings(nn.Module):
    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size, padding_idx=c.pad_token_id)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size, padding_idx=c.pad_token_id)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, input_ids):
        t = input_ids.size(1)
        positions = torch.arange(PADDING_IDX + 1, PADDING_IDX + 1 + t, device=input_ids.device)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)[None]
        return self.dropout(self.LayerNorm(x))


class SelfAttention(nn.Module):
    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.heads = c.num_attention_heads
        self.head_size = c.hidden_size // c.num_attention_heads
        self.q = nn.Linear(c.hidden_size, c.hidden_size)
        self.k = nn.Linear(c.hidden_size, c.hidden_size)
        self.v = nn.Linear(c.hidden_size, c.hidden_size)
        self.o = nn.Linear(c.hidden_size, c.hidden_size)
        self.dropout_p = c.attention_probs_dropout_prob

    def forward(self, x, mask):
        b, t, _ = x.shape
        q, k, v = (m(x).view(b, t, self.heads, self.head_size).transpose(1, 2) for m in (self.q, self.k, self.v))
        # the memory-efficient kernel takes an additive mask; flash takes none, and without this
        # choice PyTorch may pick a kernel that keeps [seqs, heads, T, T] tensors for the backward pass
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype),
                                                 dropout_p=self.dropout_p if self.training else 0.0)
        return self.o(ctx.transpose(1, 2).reshape(b, t, self.heads * self.head_size))


class Attention(nn.Module):
    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.attn = SelfAttention(c)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, x, mask):
        return self.LayerNorm(self.dropout(self.attn(x, mask)) + x)


class Intermediate(nn.Module):
    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)

    def forward(self, x):
        return F.gelu(self.dense(x))


class Output(nn.Module):
    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.dense = nn.Linear(c.intermediate_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, h, x):
        return self.LayerNorm(self.dropout(self.dense(h)) + x)


class Layer(nn.Module):
    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = Output(c)

    def forward(self, x, mask):
        a = self.attention(x, mask)
        return self.output(self.intermediate(a), a)


class Encoder(nn.Module):
    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.layer = nn.ModuleList(Layer(c) for _ in range(c.num_hidden_layers))
        self.relative_attention_bias = nn.Embedding(c.relative_attention_num_buckets, c.num_attention_heads)

    def position_bias(self, length: int, device) -> torch.Tensor:
        """[1, heads, T, T] relative position bias."""
        buckets = relative_buckets(length, self.relative_attention_bias.num_embeddings).to(device)
        return self.relative_attention_bias(buckets).permute(2, 0, 1)[None]


class MPNetEncoder(nn.Module):
    """[N, T] token ids and attention mask → [N, T, H] last hidden states (called like `ClassicBert`)."""

    uses_token_types = False

    def __init__(self, c: MPNetConfig):
        super().__init__()
        self.config = c
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        # frozen: see the module's docstring
        self.encoder.relative_attention_bias.weight.requires_grad_(False)

    def config_dict(self) -> dict:
        return self.config.to_dict()

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        x = self.embeddings(input_ids)
        t = input_ids.size(1)
        bias = self.encoder.position_bias(t, input_ids.device)
        pad = (1.0 - attention_mask[:, None, None, :].to(bias.dtype)) * torch.finfo(torch.float32).min
        mask = bias + pad  # [N, heads, T, T]
        if torch.is_autocast_enabled(x.device.type):
            # once for all layers: a per-layer cast would keep twelve copies for the backward pass
            mask = mask.to(torch.get_autocast_dtype(x.device.type))
        for layer in self.encoder.layer:
            x = layer(x, mask)
        return x


def strip_hf_prefix(state: dict) -> dict:
    """An `MPNetModel`/`MPNetForMaskedLM`/sentence-transformers state dict → ours."""
    out = {}
    for k, v in state.items():
        for prefix in ("mpnet.", "model.", "0.auto_model."):
            if k.startswith(prefix):
                k = k[len(prefix):]
        if k.startswith(("pooler.", "lm_head.", "cls.")) or k.endswith("position_ids"):
            continue
        out[k] = v
    return out


def load_pretrained(path: str | Path) -> MPNetEncoder:
    """An MPNet directory (config.json + model.safetensors) in fp32 (the carried copy is fp16)."""
    from safetensors.torch import load_file

    path = Path(path)
    cfg = MPNetConfig.from_dict(json.loads((path / "config.json").read_text()))
    enc = MPNetEncoder(cfg)
    state = {k: v.float() for k, v in strip_hf_prefix(load_file(str(path / "model.safetensors"))).items()}
    missing, unexpected = enc.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ValueError(f"{path}: weights do not fit an MPNet encoder (missing {missing[:5]}, "
                         f"unexpected {unexpected[:5]})")
    return enc
