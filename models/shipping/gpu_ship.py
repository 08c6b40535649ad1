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
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

STASH = Path("build/stash")
SHIP = Path("build/ship")
RESULTS = SHIP / "results"
MODEL_DIR = RESULTS / "model"
AGREE_MIN = 0.993  # on the RACE dev sample; the shipped rule is >= 99% on all of RACE dev
DEV_SAMPLE_EVERY = 5
THROUGHPUT_STEPS = 160
ORDER = [("full", None), ("smooth", 0.5), ("smooth", 0.8), ("keep-ffn-out", None), ("weights", None)]
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
    from models.shipping.carry import join

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


def _rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def step_export(processes: int) -> dict:
    """ONNX graph from the weights, checked; int8 recipes tried fastest first; the first that
    agrees is written, split, as the model directory."""
    import numpy as np
    import onnx
    import torch

    from inference.formatting import encode_questions, load_tokenizer
    from inference.unpadded import unpadded_logits
    from models.export import int8_check, mpnet_int8, mpnet_onnx
    from models.training import checkpoint
    from models.training.data import read_jsonl

    final = Path("build/run/final/model")
    model = checkpoint.load(final).float().eval()
    cfg = json.loads((final / "config.json").read_text())
    state = mpnet_onnx.state_arrays(model)
    work = SHIP / "graphs"
    work.mkdir(parents=True, exist_ok=True)
    fp32 = mpnet_onnx.build(state, cfg, cfg.get("pooling", "mean"))
    onnx.save(fp32, str(work / "fp32.onnx"))
    records = [r for r in read_jsonl(pack()) if r["role"] == "dev"]
    tok = load_tokenizer(final / "tokenizer.json")
    # the graph computes what PyTorch computes (float32, 8 questions, both formats)
    import onnxruntime as ort

    sess = ort.InferenceSession(str(work / "fp32.onnx"), providers=["CPUExecutionProvider"])
    diffs = {}
    for fmt in ("standard", "shortcut"):
        enc = encode_questions(tok, [(r["passage"], r["stem"], r["alternatives"]) for r in records[:8]], fmt, 512)
        with torch.no_grad():
            ref = model(torch.from_numpy(enc.input_ids), torch.from_numpy(enc.attention_mask)).numpy()
        got = unpadded_logits(lambda f: sess.run(["logits"], f)[0], enc, ["input_ids", "attention_mask"])
        diffs[fmt] = float(np.abs(ref - got)[enc.option_mask].max())
    log("fp32 graph checked", max_abs_diff=diffs)
    if max(diffs.values()) > 1e-3:
        raise RuntimeError(f"the ONNX graph differs from PyTorch by {diffs}")
    del sess
    # recipes, fastest first, on a RACE dev sample against the float32 PyTorch logits
    ref = {(r["id"], r["format"]): r["logits"] for r in _rows(RESULTS / "eval_rows.jsonl.gz") if r["role"] == "dev"}
    sample = records[::DEV_SAMPLE_EVERY]
    calib = np.load(RESULTS / "calibration.npz")
    absmax = {int(k[5:]): calib[k] for k in calib.files}
    tried, chosen = [], None
    for recipe, alpha in ORDER:
        t0 = time.time()
        graph = fp32
        if recipe == "smooth":
            graph = mpnet_onnx.build(state, cfg, cfg.get("pooling", "mean"),
                                     smooth=mpnet_int8.smooth_factors(absmax, state, alpha))
        q = mpnet_int8.quantize(graph, recipe)
        path = work / f"{recipe}{'' if alpha is None else alpha}.onnx"
        onnx.save(q, str(path))
        got = int8_check.logits("graph", path, sample, ["standard", "shortcut"], processes,
                                tokenizer=final / "tokenizer.json")
        agree = int8_check.agreement(ref, got)
        tried.append({"recipe": recipe, "alpha": alpha, "agreement": agree, "questions": len(sample),
                      "seconds": round(time.time() - t0, 1)})
        log("recipe", **tried[-1])
        (RESULTS / "export.json").write_text(json.dumps({"fp32_max_abs_diff": diffs, "tried": tried}, indent=1))
        if min(agree.values()) >= AGREE_MIN or recipe == "weights":
            chosen = {"recipe": recipe, "alpha": alpha, "graph": q}
            break
    write_model_dir(chosen, final, cfg)
    info = {"fp32_max_abs_diff": diffs, "tried": tried, "chosen": {k: chosen[k] for k in ("recipe", "alpha")},
            "files": sorted(p.name for p in MODEL_DIR.iterdir())}
    (RESULTS / "export.json").write_text(json.dumps(info, indent=1))
    mark("model", **info)
    log("model written", **info["chosen"])
    return info


def write_model_dir(chosen: dict, final: Path, cfg: dict) -> None:
    from models.export import external_data

    if MODEL_DIR.exists():
        shutil.rmtree(MODEL_DIR)
    files = external_data.save_split(chosen["graph"], MODEL_DIR, "model.int8.onnx")
    shutil.copy(final / "tokenizer.json", MODEL_DIR / "tokenizer.json")
    ev = json.loads((RESULTS / "evaluation_torch.json").read_text())
    metrics = json.loads((RESULTS / "train_metrics.json").read_text())
    card = {
        "name": "MPNet reader (RACE)", "id": "mpnet-race-v1", "backbone": "sentence-transformers/all-mpnet-base-v2",
        "formats": ["standard", "shortcut"], "max_length": int(cfg.get("max_length", 512)),
        "temperature": {f: ev["formats"][f]["temperature"] for f in ev["formats"]},
        "files": {"int8": "model.int8.onnx"}, "tokenizer": "tokenizer.json",
        "inputs": ["input_ids", "attention_mask"], "pooling": cfg.get("pooling", "mean"),
        "training": {**metrics.get("training", {}), "history": metrics.get("history")},
        "quantization": {"recipe": chosen["recipe"], "alpha": chosen["alpha"], "files": files},
        "command": "python -m models.shipping.gpu_ship start (docs/models_gpu_build.md)",
        "created": time.strftime("%Y-%m-%d"),
    }
    (MODEL_DIR / "card.json").write_text(json.dumps(card, indent=2) + "\n")


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
    from models.training.data import read_jsonl

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


def step_ortgpu(out: Path) -> None:
    """The shipped files on the GPU through onnxruntime-gpu (carried as an xz tarball in parts):
    batch throughput against PyTorch bf16 and the None-of-the-above grid, run records to `out`."""
    from models.shipping.carry import join

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
