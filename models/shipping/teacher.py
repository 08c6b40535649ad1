"""The MPNet reader's float weights, recovered from its shipped int8 files, for distillation.

    python -m models.shipping.teacher --model models/default -o build/teacher

Writes `state.safetensors` + `config.json` (what `models.training.distill` starts a student from) and
`final/model/` (a `models.training.checkpoint` directory of the reader in its own per-alternative
layout, which `models.shipping.ship_predict` reads to compute the teacher's logits on RACE train and
dev).  The shipped files are the only copy of the reader's weights: int8 per output channel,
dequantized here (`models.export.mpnet_onnx.state_from_graph`).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from models.training import checkpoint


def recover(model_dir: str | Path, out: str | Path) -> Path:
    import numpy as np
    import onnx
    from safetensors.numpy import save_file

    from models.export.mpnet_onnx import state_from_graph

    model_dir, out = Path(model_dir), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    card = json.loads((model_dir / "card.json").read_text())
    graph = onnx.load(str(model_dir / card["files"]["int8"]))
    state, cfg = state_from_graph(graph)
    cfg = {**cfg, "pad_token_id": 1, "model_type": "mpnet"}
    save_file({k: np.ascontiguousarray(v) for k, v in state.items()}, str(out / "state.safetensors"))
    (out / "config.json").write_text(json.dumps(cfg, indent=1))
    shutil.copy(model_dir / card.get("tokenizer", "tokenizer.json"), out / "tokenizer.json")
    # the per-alternative reader as models.training.checkpoint writes it (ship_predict reads it)
    import torch

    from models.training.mc_model import MultipleChoiceModel
    from models.training.mpnet import MPNetConfig, MPNetEncoder

    model = MultipleChoiceModel(MPNetEncoder(MPNetConfig.from_dict(cfg)), pooling=card.get("pooling", "mean"))
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
    checkpoint.save(model, out / "final" / "model", out,
                    {"max_length": int(card.get("max_length", 512)), "formats": card["formats"]})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.shipping.teacher", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(Path(__file__).resolve().parents[1] / "default"))
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args(argv)
    print(recover(args.model, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
