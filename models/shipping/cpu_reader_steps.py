"""What the CPU reader's pipeline (`models.shipping.cpu_reader_ship run`) shares and its small steps:
the folders (carried files in ``build/stash``, work in ``build/cpu``, results in ``build/cpu/results``),
the log and its ``done_<step>.json`` markers, a step as a subprocess whose log lands in the results,
the environment record, the teacher's carried files checked against their manifest, and the
students' training commands (`--plan`).
"""
from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

STASH = Path("build/stash")
WORK = Path("build/cpu")
RESULTS = WORK / "results"
NCCL_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
            "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "PYTHONUNBUFFERED": "1"}


def log(msg, **kw):
    line = json.dumps({"t": round(time.time(), 1), "msg": msg, **kw})
    print(line, flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "log.jsonl", "a") as f:
        f.write(line + "\n")


def mark(step: str, **info) -> None:
    (RESULTS / f"done_{step}.json").write_text(json.dumps({"t": time.time(), **info}))


def popen(cmd: list[str], logname: str, env: dict | None = None) -> subprocess.Popen:
    WORK.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(cmd, stdout=open(WORK / f"{logname}.log", "w"), stderr=subprocess.STDOUT,
                            env={**os.environ, **NCCL_ENV, **(env or {})})


def finish(p: subprocess.Popen, logname: str) -> None:
    code = p.wait()
    shutil.copy(WORK / f"{logname}.log", RESULTS / f"{logname}.log")
    if code:
        raise RuntimeError(f"{logname} failed with status {code} (build/cpu/{logname}.log)")


def step_env() -> dict:
    info = {"python": sys.version, "cpus": os.cpu_count()}
    try:
        import torch

        info.update(torch=torch.__version__, gpus=torch.cuda.device_count(),
                    gpu_names=[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])
    except Exception as exc:
        info["torch_error"] = str(exc)
    for mod in ("onnx", "onnxruntime", "tokenizers", "safetensors"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as exc:
            info[mod] = f"missing: {exc}"
    try:
        text = open("/proc/cpuinfo").read().splitlines()
        flags = next(l for l in text if l.startswith("flags")).split()
        info["cpu"] = next(l for l in text if l.startswith("model name")).split(":", 1)[1].strip()
        info["cpu_flags"] = sorted(f for f in flags if f.startswith(("avx512", "avx_vnni", "amx", "avx2")))
    except Exception:
        pass
    (RESULTS / "env.json").write_text(json.dumps(info, indent=1))
    log("env", gpus=info.get("gpus"), cpu=info.get("cpu"))
    return info


def wait_for(paths: list[Path], max_s: float) -> None:
    deadline = time.time() + max_s
    while not all(p.is_file() for p in paths):
        if time.time() > deadline:
            raise RuntimeError(f"never arrived: {[str(p) for p in paths if not p.is_file()]}")
        time.sleep(2)


def teacher_files(max_s: float) -> Path:
    """The teacher's shipped files, each checked against the carried manifest (sizes and
    digests) and unpacked where it travelled as .xz."""
    folder = STASH / "teacher"
    manifest = folder / "manifest.json"
    wait_for([manifest], max_s)
    m = json.loads(manifest.read_text())
    deadline = time.time() + max_s
    for f in m["files"]:
        target = folder / f["name"]
        packed = folder / (f["name"] + ".xz")
        while not target.is_file() or target.stat().st_size != f["size"]:
            if packed.is_file() and packed.stat().st_size == f.get("xz_size", -1):
                tmp = target.with_name(target.name + ".unpacking")
                with lzma.open(packed) as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                tmp.replace(target)
                continue
            if time.time() > deadline:
                raise RuntimeError(f"{target}: never arrived")
            time.sleep(2)
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        if digest != f["sha256"]:
            raise RuntimeError(f"{target}: digest differs from the manifest")
    log("teacher files checked", files=len(m["files"]))
    return folder


def parse_plan(plan: str) -> list[dict]:
    out = []
    for part in plan.split(";"):
        name, layers, gpus, lr = part.split(":")
        out.append({"name": name, "layers": int(layers), "gpus": gpus.split(","), "lr": float(lr)})
    return out


def student_cmd(s: dict, args) -> list[str]:
    common = ["--data", str(WORK / "enc.npz"), "--teacher", str(WORK / "teacher"), "--teacher-logits",
              str(RESULTS / "logits_race.npz"), "--layers", str(s["layers"]), "--out", str(WORK / "students" / s["name"]),
              "--lr", str(s["lr"]), "--schedule-seconds", str(args.schedule_seconds), "--epochs", str(args.epochs),
              "--device", args.device, *(["--limit", str(args.limit)] if args.limit else [])]
    if len(s["gpus"]) > 1:
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(len(s["gpus"])),
                "--master_port", str(29500 + int(s["gpus"][0])), "-m", "models.training.distill", *common]
    return [sys.executable, "-m", "models.training.distill", *common]


def pack() -> Path:
    return STASH / "race.jsonl.xz"
