"""The one-sequence reader in PyTorch: one encoder pass per question, one score per alternative.

Input: the token ids of `inference.one_sequence` ([B, T]), the padding mask, and `option_ids`
(k + 1 on the tokens of alternative k).  Each alternative's vector is the mean of the encoder's
last hidden states over its own tokens, and the scorer (one linear layer, as in the seed's
Figure 2 architecture) turns it into a logit; a question's missing alternatives get −10⁴.

Parameter names are those of `models.training.mc_model.MultipleChoiceModel` (``encoder.*``,
``scorer.*``), so `models.export.mpnet_onnx.build` writes the graph from the same state dict and a
student starts from the MPNet reader's weights (`from_teacher`, a choice of its layers).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from models.training.mpnet import MPNetConfig, MPNetEncoder


class OneSequenceReader(nn.Module):
    def __init__(self, encoder, dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.scorer = nn.Linear(encoder.config.hidden_size, 1)
        self.pooling = "options"

    @property
    def config(self):
        return self.encoder.config

    def forward(self, input_ids, attention_mask, option_ids, options: int):
        h = self.encoder(input_ids, attention_mask)  # [B, T, H]
        which = torch.arange(1, options + 1, device=input_ids.device)
        onehot = (option_ids[:, None, :] == which[None, :, None]).to(h.dtype)  # [B, K, T]
        count = onehot.sum(-1, keepdim=True)
        pooled = torch.bmm(onehot, h) / count.clamp(min=1.0)
        logits = self.scorer(self.dropout(pooled)).squeeze(-1).float()
        return logits.masked_fill(count.squeeze(-1) == 0, -1e4)


def mpnet_student(state: dict, config: dict, layers: list[int] | None = None) -> OneSequenceReader:
    """A reader whose encoder takes `layers` (indices into the teacher's) of an MPNet reader's
    float weights (`models.export.mpnet_onnx.state_from_graph`), with its embeddings and scorer."""
    teacher_layers = int(config["num_hidden_layers"])
    layers = list(range(teacher_layers)) if layers is None else list(layers)
    cfg = MPNetConfig.from_dict({**config, "num_hidden_layers": len(layers)})
    model = OneSequenceReader(MPNetEncoder(cfg))
    mapped = {}
    for k, v in state.items():
        if k.startswith("encoder.encoder.layer."):
            rest = k[len("encoder.encoder.layer."):]
            src, tail = rest.split(".", 1)
            if int(src) in layers:
                for new, old in enumerate(layers):
                    if old == int(src):
                        mapped[f"encoder.encoder.layer.{new}.{tail}"] = torch.as_tensor(np.array(v))
            continue
        mapped[k] = torch.as_tensor(np.array(v))
    missing, unexpected = model.load_state_dict(mapped, strict=False)
    if missing or unexpected:
        raise ValueError(f"teacher weights do not fit the student (missing {missing[:4]}, unexpected {unexpected[:4]})")
    return model


def spread(teacher_layers: int, keep: int) -> list[int]:
    """`keep` of the teacher's layers, evenly spaced and ending with its last (6 of 12: 1, 3, …, 11)."""
    if keep >= teacher_layers:
        return list(range(teacher_layers))
    step = teacher_layers / keep
    return [int(round(teacher_layers - 1 - step * (keep - 1 - i))) for i in range(keep)]


def save(model: OneSequenceReader, out_dir, extra: dict | None = None):
    """config.json + model.safetensors (fp32: this file stays on the training machine)."""
    from safetensors.torch import save_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()},
              str(out / "model.safetensors"))
    cfg = {**model.encoder.config_dict(), "encoder": "mpnet", "layout": "one-sequence", **(extra or {})}
    (out / "config.json").write_text(json.dumps(cfg, indent=1))
    return out


def load(directory) -> OneSequenceReader:
    from safetensors.torch import load_file

    directory = Path(directory)
    cfg = json.loads((directory / "config.json").read_text())
    model = OneSequenceReader(MPNetEncoder(MPNetConfig.from_dict(cfg)))
    model.load_state_dict({k: v.float() for k, v in load_file(str(directory / "model.safetensors")).items()})
    return model.eval()
