#!/bin/bash
# A second round of training from the first run's weights (same data, lr 1e-5, a new schedule),
# then the same weight-only int8 files under build/ship/results/model2.
set -e
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
python3 -m torch.distributed.run --standalone --nproc_per_node 4 -m models.training.train --data build/stash/race.jsonl.xz \
  --backbone build/stash/mpnet --crossfit 1 --formats standard,shortcut --pooling mean --lr 1e-5 --batch-size 16 \
  --max-tokens 32768 --patience 99 --seed 2 --no-progress --epochs 1 --out build/run2 --encoded build/encoded.npz \
  --schedule-seconds ${1:-240} --stop-after ${2:-260} --init-from build/run/final/model > build/ship/train2.log 2>&1
python3 - <<'PY'
from pathlib import Path; import json
from models.export import mpnet_int8, mpnet_onnx
from models.shipping.gpu_ship_export import write_model_dir
from models.shipping.gpu_ship_steps import RESULTS
from models.training import checkpoint
final = Path("build/run2/final/model")
model = checkpoint.load(final).float().eval()
cfg = json.loads((final / "config.json").read_text())
q = mpnet_int8.quantize(mpnet_onnx.build(mpnet_onnx.state_arrays(model), cfg, cfg.get("pooling", "mean")), "weights")
model_dir = RESULTS / "model2"
write_model_dir({"recipe": "weights", "alpha": None, "graph": q}, final, cfg, model_dir)
import shutil; shutil.copy("build/run2/final/metrics.json", model_dir / "train_metrics2.json")
print(sorted((p.name, p.stat().st_size) for p in model_dir.iterdir()))
PY
