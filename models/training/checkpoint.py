"""A trained multiple-choice model as a plain directory: config.json, model.safetensors (fp16), tokenizer.

The GPU machine writes this; `models.export.package` reads it back on any machine and exports
it to ONNX.  fp16 halves the bytes that must come back from the GPU machine; the
export and the int8 graph are computed from it, so nothing is lost that the shipped
graph keeps.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json")


def save(model, out_dir: str | Path, backbone: str | Path, extra: dict | None = None) -> Path:
    from safetensors.torch import save_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to("cpu").half().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(out / "model.safetensors"))
    from models.training.mc_model import HFEncoder
    from models.training.mpnet import MPNetEncoder

    if isinstance(model.encoder, MPNetEncoder):
        cfg = {**model.encoder.config_dict(), "encoder": "mpnet", "pooling": model.pooling, **(extra or {})}
    elif isinstance(model.encoder, HFEncoder):  # any transformers encoder: its own config
        cfg = {**model.encoder.config_dict(), "encoder": "hf", "pooling": model.pooling, **(extra or {})}
    else:
        cfg = {"model_type": "bert", **asdict(model.config), "pooling": model.pooling, **(extra or {})}
    (out / "config.json").write_text(json.dumps(cfg, indent=1))
    for name in TOKENIZER_FILES:
        src = Path(backbone) / name
        if src.exists():
            shutil.copy(src, out / name)
    return out


def load(directory: str | Path):
    """The `models.training.mc_model.MultipleChoiceModel` saved by `save`, in fp32, eval mode."""
    from safetensors.torch import load_file

    from models.training.mc_model import BertConfig, HFEncoder, MultipleChoiceModel, build

    directory = Path(directory)
    cfg = json.loads((directory / "config.json").read_text())
    if cfg.get("encoder") == "mpnet":
        from models.training.mpnet import MPNetConfig, MPNetEncoder

        model = MultipleChoiceModel(MPNetEncoder(MPNetConfig.from_dict(cfg)), pooling=cfg.get("pooling", "cls"))
    elif cfg.get("encoder") == "hf":
        hf = {k: v for k, v in cfg.items() if k not in ("encoder", "pooling", "max_length", "formats", "training")}
        model = MultipleChoiceModel(HFEncoder.from_config(hf), pooling=cfg.get("pooling", "cls"))
    else:
        model = build(None, BertConfig(**{k: cfg[k] for k in BertConfig.__dataclass_fields__ if k in cfg}),
                      pooling=cfg.get("pooling", "cls"))
    state = {k: v.float() for k, v in load_file(str(directory / "model.safetensors")).items()}
    model.load_state_dict(state)
    return model.eval()
