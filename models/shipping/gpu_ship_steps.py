"""The steps of the MPNet reader's pipeline on a GPU machine (`models.shipping.gpu_ship run`), and
what they share: the folders (carried files in ``build/stash``, work in ``build/ship``, results in
``build/ship/results``), the step log and its ``done_<step>.json`` markers, a step as a subprocess.

Each step writes its results as soon as they exist: the environment record, the carried weight
parts joined and checked, training and the logits on N GPUs (torchrun), the shipped directory
evaluated through the product's runtime on the CPU cores, the 1-GPU and N-GPU training throughput,
and the shipped files on the GPU through onnxruntime-gpu (`step_ortgpu`).  The ONNX graph and the
int8 recipe are `models.shipping.gpu_ship_export`'s.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from models.shipping.carry import join
from models.training.data import read_jsonl

STASH = Path("build/stash")
SHIP = Path("build/ship")
RESULTS = SHIP / "results"
MODEL_DIR = RESULTS / "model"
THROUGHPUT_STEPS = 160
TRAIN_ARGS = ["--crossfit", "1", "--formats", "standard,shortcut", "--pooling", "mean", "--lr", "2e-5",
              "--batch-size", "16", "--max-tokens", str(16 * 4 * 512), "--patience", "99", "--seed", "1",
              "--no-progress"]
NCCL_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
            "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def pack() -> Path:
    """The carried records (`models.training.race_pack`, recompressed with xz to travel in fewer calls)."""
    for name in ("race.jsonl.xz", "race.jsonl.gz"):
        if (STASH / name).is_file():
            return STASH / name
    return STASH / "race.jsonl.xz"


def log(msg, **kw):
    line = json.dumps({"t": round(time.time(), 1), "msg": msg, **kw})
    print(line, flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "ship_log.jsonl", "a") as f:
        f.write(line + "\n")


def mark(step: str, **info) -> None:
    (RESULTS / f"done_{step}.json").write_text(json.dumps({"t": time.time(), **info}))


def sh(cmd: list[str], logname: str, env: dict | None = None) -> None:
    """Run a step, its output in build/ship/<logname>.log (tail copied to results on failure)."""
    SHIP.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **NCCL_ENV, **(env or {})}
    with open(SHIP / f"{logname}.log", "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=full_env)
    shutil.copy(SHIP / f"{logname}.log", RESULTS / f"{logname}.log")
    if p.returncode:
        raise RuntimeError(f"{logname} failed with status {p.returncode}")


def torchrun(n: int, module: str, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(n),
            "-m", module, *args]


# ------------------------------------------------------------------ steps
def step_env() -> None:
    info = {"python": sys.version, "cpus": os.cpu_count()}
    try:
        import torch

        info.update(torch=torch.__version__, cuda=torch.cuda.is_available(), gpus=torch.cuda.device_count(),
                    gpu_names=[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])
    except Exception as exc:  # recorded, not fatal: the log says what is missing
        info["torch_error"] = str(exc)
    for mod in ("onnx", "onnxruntime", "transformers", "tokenizers"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as exc:
            info[mod] = f"missing: {exc}"
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
        model = next(line for line in open("/proc/cpuinfo") if line.startswith("model name")).split(":", 1)[1]
        info["cpu"] = model.strip()
        info["cpu_flags"] = sorted(f for f in flags if f.startswith(("avx512", "avx_vnni", "amx", "avx2")))
    except Exception:
        pass
    (RESULTS / "env.json").write_text(json.dumps(info, indent=1))
    log("env", **{k: info.get(k) for k in ("torch", "gpus", "onnxruntime", "cpu")})


def wait_for_weights(max_s: float) -> Path:
    """Join the carried weight parts once all have arrived (checked by their digests)."""
    manifest = STASH / "parts" / "model.safetensors.manifest.json"
    target = STASH / "mpnet" / "model.safetensors"
    deadline = time.time() + max_s
    while True:
        if target.is_file() and target.stat().st_size > 0 and not manifest.is_file():
            return target
        if manifest.is_file() and target.is_file():
            m = json.loads(manifest.read_text())
            if target.stat().st_size == m["size"]:
                return target  # joined by an earlier run of the pipeline
        if manifest.is_file():
            m = json.loads(manifest.read_text())
            if all((manifest.parent / p["name"]).is_file() and (manifest.parent / p["name"]).stat().st_size == p["size"]
                   for p in m["parts"]):
                join(manifest, target)
                log("weights joined", bytes=target.stat().st_size)
                return target
        if time.time() > deadline:
            raise RuntimeError("the weight parts did not all arrive")
        time.sleep(2)


def step_train(gpus: int, schedule_s: float, stop_after: float, epochs: int) -> None:
    args = ["--data", str(pack()), "--backbone", str(STASH / "mpnet"), *TRAIN_ARGS,
            "--epochs", str(epochs), "--out", "build/run", "--encoded", "build/encoded.npz",
            "--schedule-seconds", str(schedule_s), "--stop-after", str(stop_after)]
    sh(torchrun(gpus, "models.training.train", args), "train")
    final = Path("build/run/final")
    shutil.copy(final / "metrics.json", RESULTS / "train_metrics.json")
    digests = sorted({p.read_text().strip() for p in final.glob("weights_rank*.sha256")})
    mark("train", digests=digests)
    log("trained", ranks_agree=len(digests) == 1)


def step_predict(gpus: int) -> None:
    sh(torchrun(gpus, "models.shipping.ship_predict", ["--checkpoint", "build/run/final", "--data", str(pack()),
                                              "--encoded", "build/encoded.npz", "--out", str(SHIP / "pred")]),
       "predict")
    for name in ("evaluation.json", "logits_race.npz", "calibration.npz", "eval_rows.jsonl.gz"):
        shutil.copy(SHIP / "pred" / name, RESULTS / (name if name != "evaluation.json" else "evaluation_torch.json"))
    mark("predict")
    log("predicted")


EVAL_ORDER = (("race-test", lambda r: r["source"] == "race" and r["role"] == "eval"),
              ("race-dev", lambda r: r["role"] == "dev"),
              ("expmrc", lambda r: r["source"] == "expmrc"),
              ("embrace", lambda r: r["source"] == "embrace"),
              ("dream", lambda r: r["source"] == "dream"),
              ("quail", lambda r: r["source"] == "quail"))


def step_int8_eval(processes: int) -> None:
    """The shipped directory through `inference.load_model` on the CPU cores, set by set."""
    from models.evaluation.summary import summarise
    from models.export import int8_check

    records = [r for r in read_jsonl(pack()) if r["role"] in ("dev", "eval")]
    rows = []
    for name, keep in EVAL_ORDER:
        part = [r for r in records if keep(r)]
        t0 = time.time()
        got = int8_check.logits("dir", MODEL_DIR, part, ["standard", "shortcut"], processes)
        meta = {r["id"]: r for r in part}
        new = [{"id": rid, "format": fmt, "key": meta[rid].get("key"), "source": meta[rid]["source"],
                "level": meta[rid].get("level"), "role": meta[rid]["role"], "logits": z}
               for (rid, fmt), z in got.items()]
        rows += new
        with gzip.open(RESULTS / "int8_rows.jsonl.gz", "wt") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        log("int8 evaluated", set=name, questions=len(part), seconds=round(time.time() - t0, 1))
        if any(r["role"] == "dev" for r in rows):
            summary = summarise([r for r in rows if r["role"] == "dev"], [r for r in rows if r["role"] == "eval"])
            (RESULTS / "evaluation_int8.json").write_text(json.dumps(summary, indent=1))
    mark("int8_eval")


def step_throughput(gpus: int) -> None:
    """Training throughput of the same code on 1 GPU and on N, one after the other."""
    got = {}
    for n in sorted({1, gpus}):
        args = ["--data", str(pack()), "--backbone", str(STASH / "mpnet"), *TRAIN_ARGS,
                "--epochs", "1", "--out", f"build/tp{n}", "--encoded", "build/encoded.npz",
                "--max-steps", str(THROUGHPUT_STEPS), "--throughput-only"]
        sh(torchrun(n, "models.training.train", args), f"throughput{n}")
        m = json.loads(Path(f"build/tp{n}/final/metrics.json").read_text())["training"]
        got[n] = {k: m.get(k) for k in ("steady_questions_per_s", "steady_tokens_per_s", "train_questions_per_s",
                                        "train_tokens_per_s", "steps", "gpu_name")}
    out = {"steps_per_rank": THROUGHPUT_STEPS, "runs": got}
    for n in got:  # a run shorter than the steady window: its whole-run figures
        for k in ("questions", "tokens"):
            if got[n].get(f"steady_{k}_per_s") is None:
                got[n][f"steady_{k}_per_s"] = got[n].get(f"train_{k}_per_s")
    if gpus > 1:
        out["ratio_questions"] = got[gpus]["steady_questions_per_s"] / got[1]["steady_questions_per_s"]
        out["ratio_tokens"] = got[gpus]["steady_tokens_per_s"] / got[1]["steady_tokens_per_s"]
    (RESULTS / "throughput.json").write_text(json.dumps(out, indent=1))
    mark("throughput")
    log("throughput", ratio=out.get("ratio_questions"))


def step_ortgpu(out: Path) -> None:
    """The shipped files on the GPU through onnxruntime-gpu (carried as an xz tarball in parts):
    batch throughput against PyTorch bf16 and the None-of-the-above grid, run records to `out`."""
    site = Path("/tmp/site")
    if not (site / "onnxruntime").is_dir():
        manifest = STASH / "ortgpu" / "ortgpu.tar.xz.manifest.json"
        tarball = join(manifest, SHIP / "ortgpu.tar.xz")
        site.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-xJf", str(tarball), "-C", str(site)], check=True)
    env = {"PYTHONPATH": f"{site}:{os.getcwd()}", "MCQLENS_BENCH_RUNS": str(out)}
    out.mkdir(parents=True, exist_ok=True)
    for name, cmd in (
            ("bench_gpu_mpnet", [sys.executable, "benchmarks/bench_gpu_mpnet.py", "--model", str(MODEL_DIR),
                                 "--checkpoint", "build/run/final/model", "--data", str(pack()),
                                 "--out", str(out / "bench_gpu_mpnet.json")]),
            ("bench_nota_cuda", [sys.executable, "benchmarks/bench_nota.py", "--model", str(MODEL_DIR), "--device",
                                 "cuda", "--shipped", "--data", str(STASH / "expmrc-race-dev.json"),
                                 "--out", str(SHIP / "nota")])):
        try:
            sh(cmd, name, env)
        except RuntimeError as exc:
            log("ortgpu step failed", step=name, error=str(exc))
        shutil.copy(SHIP / f"{name}.log", out / f"{name}.log")
