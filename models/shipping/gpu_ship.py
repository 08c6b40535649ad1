"""Build and ship the MPNet reader on a GPU machine, with nothing but small files coming back.

The plan (docs/models_gpu_build.md) is written for a lease of a few dozen minutes, calls of at
most 10 minutes, a machine that goes back 30 s after a call and 8 files of < 16 MiB a call:
the whole build runs in the background (`start`), every step writes its results under
``build/ship/results`` as soon as they exist, and each call only waits and copies.

    python -m models.shipping.gpu_ship stage                 # each call: carried files → build/stash
    python -m models.shipping.gpu_ship start --gpus 4 --schedule-seconds 600
    python -m models.shipping.gpu_ship wait --until model --max 540 --out $OUT [--files ...]
    python -m models.shipping.gpu_ship collect --out $OUT --files model.int8.onnx.data3 ...

The background pipeline (`run`): environment record; token ids of the pack on every core
(`models.training.encoded_cache`) while the last weight parts arrive; the weights joined and checked;
training on N GPUs (`torchrun -m models.training.train`, DDP, schedule fitted to --schedule-seconds);
logits on N GPUs (`models.shipping.ship_predict`: float32 on RACE dev and the evaluation sets, bf16 on
RACE train + dev, SmoothQuant statistics); the ONNX graph built from the weights
(`models.export.mpnet_onnx`) and checked against PyTorch; int8 recipes (`models.export.mpnet_int8`) tried
from the fastest, the first whose argmax agrees with float32 on >= 99.3% of a RACE dev sample
in both formats is shipped (split in files < 16 MiB, card.json); then, side by side, the shipped directory
evaluated through the product's runtime on the CPU cores (`inference.load_model`) and the
1-GPU and N-GPU training throughput of the same code.

Here: the pipeline in its order (`run`) and what each call does (`stage`, `start`, `wait`,
`collect`); the steps are `models.shipping.gpu_ship_steps`, the graph and the int8 recipe
`models.shipping.gpu_ship_export`.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from models.shipping.gpu_ship_export import step_export
from models.shipping.gpu_ship_steps import (MODEL_DIR, NCCL_ENV, RESULTS, SHIP, STASH, log, mark, pack, step_env,
                                           step_int8_eval, step_ortgpu, step_predict, step_throughput, step_train,
                                           wait_for_weights)


def run(args) -> int:
    RESULTS.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    try:
        step_env()
        done = Path("build/encoded.npz").is_file()  # a restarted pipeline keeps the token ids
        enc = subprocess.Popen([sys.executable, "-c", "pass"] if done else
                               [sys.executable, "-m", "models.training.encoded_cache", "--data", str(pack()),
                                "--backbone", str(STASH / "mpnet"), "-o", "build/encoded.npz"],
                               stdout=open(SHIP / ("encode2.log" if done else "encode.log"), "w"),
                               stderr=subprocess.STDOUT)
        wait_for_weights(args.weights_wait)
        if enc.wait():
            raise RuntimeError("encoding failed (build/ship/encode.log)")
        log("encoded", seconds=round(time.time() - t0, 1))
        step_train(args.gpus, args.schedule_seconds, args.stop_after, args.epochs)
        step_predict(args.gpus)
        step_export(args.processes)
        side = subprocess.Popen([sys.executable, "-m", "models.shipping.gpu_ship", "throughput", "--gpus", str(args.gpus)],
                                stdout=open(SHIP / "side.log", "w"), stderr=subprocess.STDOUT)
        step_int8_eval(args.processes)
        side.wait()
        mark("all", seconds=round(time.time() - t0, 1))
        log("all done", seconds=round(time.time() - t0, 1))
    except Exception as exc:
        log("FAILED", error=f"{type(exc).__name__}: {exc}")
        (RESULTS / "FAILED").write_text(str(exc))
        return 1
    return 0


# ------------------------------------------------------------------ what a call does
def stage() -> None:
    """Copy what this call carried (carry/) into build/stash, which stays on the warm machine."""
    src = Path("carry")
    STASH.mkdir(parents=True, exist_ok=True)
    n = 0
    for f in src.rglob("*") if src.is_dir() else []:
        if f.is_file():
            rel = f.relative_to(src)
            rel = Path(*rel.parts[1:]) if len(rel.parts) > 1 else rel  # carry/<call>/<path>
            dst = STASH / rel
            if dst.is_file() and dst.stat().st_size == f.stat().st_size:
                continue  # an earlier call's folder, still on the warm machine
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(dst.name + ".partial")
            shutil.copy(f, tmp)
            tmp.replace(dst)  # the pipeline polls for parts: it never sees half of one
            n += 1
    print(json.dumps({"staged": n, "stash": sorted(str(p.relative_to(STASH)) for p in STASH.rglob("*") if p.is_file())[:60]}))


def start(args) -> None:
    SHIP.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "models.shipping.gpu_ship", "run", "--gpus", str(args.gpus), "--schedule-seconds",
           str(args.schedule_seconds), "--stop-after", str(args.stop_after), "--epochs", str(args.epochs),
           "--processes", str(args.processes), "--weights-wait", str(args.weights_wait)]
    # a new session: the pipeline outlives this call (the machine stays while calls follow)
    subprocess.Popen(cmd, stdout=open(SHIP / "pipeline.log", "w"), stderr=subprocess.STDOUT,
                     start_new_session=True, env={**os.environ, **NCCL_ENV, "PYTHONUNBUFFERED": "1"})
    print("pipeline started", flush=True)


def status_text() -> str:
    lines = []
    if (RESULTS / "ship_log.jsonl").is_file():
        lines += (RESULTS / "ship_log.jsonl").read_text().splitlines()[-12:]
    for name in ("train.log", "predict.log", "encode.log"):
        p = SHIP / name
        if p.is_file():
            tail = [l for l in p.read_text(errors="replace").splitlines() if l.startswith("{")][-4:]
            lines += [f"{name}: {l[:400]}" for l in tail]
    return "\n".join(lines)


def small_bundle(out: Path) -> None:
    """Every small result (JSON, logs, compressed rows) in one tar.gz: one of the 8 files."""
    with tarfile.open(out / "results.tgz", "w:gz") as tar:
        for p in sorted(RESULTS.rglob("*")):
            if p.is_file() and p.parent == RESULTS and p.stat().st_size < 12 * 1024 * 1024 \
                    and not p.name.startswith("logits_race"):
                tar.add(p, arcname=p.name)
        card = MODEL_DIR / "card.json"
        if card.is_file():
            tar.add(card, arcname="model_card.json")
    for name in ("ship_log.jsonl",):
        if (RESULTS / name).is_file():
            shutil.copy(RESULTS / name, out / name)


def collect(out: Path, files: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in files:
        for base in (MODEL_DIR, RESULTS):
            if (base / name).is_file():
                shutil.copy(base / name, out / name)
                break
    small_bundle(out)


def wait(args) -> None:
    deadline = time.time() + args.max
    marker = RESULTS / f"done_{args.until}.json"
    while time.time() < deadline and not marker.is_file() and not (RESULTS / "FAILED").is_file():
        time.sleep(3)
    print(status_text(), flush=True)
    print(json.dumps({"reached": marker.is_file(), "failed": (RESULTS / "FAILED").is_file()}), flush=True)
    if args.out:
        collect(Path(args.out), args.files or [])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.shipping.gpu_ship", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("stage")
    for name in ("start", "run"):
        p = sub.add_parser(name)
        p.add_argument("--gpus", type=int, default=4)
        p.add_argument("--schedule-seconds", type=float, default=600)
        p.add_argument("--stop-after", type=float, default=660)
        p.add_argument("--epochs", type=int, default=6)
        p.add_argument("--processes", type=int, default=max(1, (os.cpu_count() or 8) - 8))
        p.add_argument("--weights-wait", type=float, default=900)
    o = sub.add_parser("ortgpu")
    o.add_argument("--out", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--gpus", type=int, default=4)
    w = sub.add_parser("wait")
    w.add_argument("--until", default="model")
    w.add_argument("--max", type=float, default=540)
    w.add_argument("--out", default="")
    w.add_argument("--files", nargs="*")
    c = sub.add_parser("collect")
    c.add_argument("--out", required=True)
    c.add_argument("--files", nargs="*")
    args = ap.parse_args(argv)
    if args.cmd == "stage":
        stage()
    elif args.cmd == "start":
        start(args)
    elif args.cmd == "run":
        return run(args)
    elif args.cmd == "ortgpu":
        step_ortgpu(Path(args.out))
    elif args.cmd == "throughput":
        step_throughput(args.gpus)
    elif args.cmd == "wait":
        wait(args)
    else:
        collect(Path(args.out), args.files or [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
