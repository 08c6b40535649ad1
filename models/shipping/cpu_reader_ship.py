"""Build the CPU reader's candidates on a lent GPU machine; only int8 files and records come back.

The plan (docs/models_gpu_build.md, "The CPU reader"): the MPNet reader (the teacher) arrives as
its shipped int8 files, with the RACE pack, in the first two calls; in the background, on
the machine's cores and GPUs:

1. ``env.json``: torch, GPUs, onnxruntime, the CPU and its VNNI/AMX flags;
2. token ids of the pack in both layouts (`models.training.one_sequence_data` for the students,
   `models.training.encoded_cache` for the teacher), while the teacher's files still arrive;
3. the teacher's float weights recovered from its int8 files (`models.shipping.teacher`) and its bf16
   logits on RACE train and dev in both formats, on every GPU (`models.shipping.ship_predict --race-only`):
   ``logits_race.npz``, the distillation targets (kept this time: they come back);
4. the students side by side, each on its GPUs (`models.training.distill`, `--plan`), for
   `--schedule-seconds`;
5. each student, as it ends: its ONNX graph (`models.export.mpnet_onnx.build`, one-sequence layout),
   calibration on RACE train questions, the int8 storage with float16 outlier rows
   (`models.export.int8_rows`), written as files under 16 MiB; the stored weights' argmax agreement
   with the float student on RACE dev, on its GPU (`export.json`).

Every result lands in ``build/cpu/results`` as soon as it exists (``done_<step>.json`` marks a
finished step); `wait` and `collect` copy them to a call's $OUT.

    python -m models.shipping.cpu_reader_ship start --plan "m12:12:0,1:2e-5;m6:6:2:5e-5;m3:3:3:8e-5" --schedule-seconds 540
    python -m models.shipping.cpu_reader_ship wait --until all --max 540 --out $OUT
    python -m models.shipping.cpu_reader_ship collect --out $OUT --files m12/model.int8.onnx.data0 ...
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

STASH = Path("build/stash")
WORK = Path("build/cpu")
RESULTS = WORK / "results"
NCCL_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
            "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "PYTHONUNBUFFERED": "1"}
CALIBRATION_QUESTIONS = 48


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
    import hashlib

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


def export_student(name: str, device: str = "cuda") -> dict:
    """The student's stored int8 files (under RESULTS/<name>/model) and their agreement with it."""
    import numpy as np
    import torch

    from inference.formatting import load_tokenizer
    from models.export import external_data, int8_rows, mpnet_onnx
    from models.export.mpnet_int8 import activation_absmax
    from models.training.data import read_jsonl
    from models.training.distill import predict
    from models.training.one_sequence_data import load as load_items
    from models.training.one_sequence_reader import load as load_student, mpnet_student

    t0 = time.time()
    src = WORK / "students" / name
    out = RESULTS / name
    out.mkdir(parents=True, exist_ok=True)
    for f in ("metrics.json", "logits_eval.npz"):
        shutil.copy(src / f, out / f)
    model = load_student(src / "model")
    cfg = json.loads((src / "model" / "config.json").read_text())
    state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    fp32 = mpnet_onnx.build(state, cfg, "mean", layout="one-sequence")
    tok = load_tokenizer(WORK / "teacher" / "tokenizer.json")
    train = [r for r in read_jsonl(pack()) if r["role"] == "train"][:CALIBRATION_QUESTIONS]
    absmax = activation_absmax(fp32, int8_rows.calibration_feeds(tok, train))
    channels = int8_rows.outlier_channels(absmax)
    stored = int8_rows.store(fp32, channels)
    files = external_data.save_split(stored, out / "model", "model.int8.onnx")
    shutil.copy(WORK / "teacher" / "tokenizer.json", out / "model" / "tokenizer.json")
    # the stored weights, dequantized, against the float student on RACE dev (float32 on its GPU)
    dense_state, _ = mpnet_onnx.state_from_graph(stored)
    again = mpnet_student(dense_state, {**cfg, "num_hidden_layers": cfg["num_hidden_layers"]},
                          list(range(cfg["num_hidden_layers"]))).to(device).eval()
    torch.backends.cuda.matmul.allow_tf32 = False
    items = [it for it in load_items(WORK / "enc.npz") if it.role == "dev"]
    ref = np.load(src / "logits_eval.npz")
    dev_rows = ref["roles"] == "dev"
    agreement = {}
    for L in (512, 384):
        got = predict(again, items, torch, device, 49152, L, int(cfg.get("pad_token_id", 1)))
        want = ref[f"logits{L}"][dev_rows]
        for fmt in ("standard", "shortcut"):
            pick = [i for i, it in enumerate(items) if it.fmt == fmt]
            same = [int(np.argmax(got[i])) == int(np.nanargmax(want[i])) for i in pick]
            agreement[f"{fmt}@{L}"] = sum(same) / max(1, len(same))
    info = {"files": files, "bytes": sum((out / "model" / f).stat().st_size for f in files),
            "outlier_rows": {k: v.tolist() for k, v in channels.items()},
            "calibration": f"{CALIBRATION_QUESTIONS} RACE train questions x 2 formats, largest |x| per input channel; "
                           f"rows above {int8_rows.RATIO}x the median channel, at most {int8_rows.MOST}",
            "agreement_stored_vs_float_dev": agreement, "questions": len(items) // 2,
            "seconds": round(time.time() - t0, 1)}
    (out / "export.json").write_text(json.dumps(info, indent=1))
    return info


def pack() -> Path:
    return STASH / "race.jsonl.xz"


def run(args) -> int:
    RESULTS.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    try:
        info = step_env()
        cpus = os.cpu_count() or 8
        wait_for([pack(), STASH / "teacher" / "tokenizer.json"], args.wait)
        done = lambda step: (RESULTS / f"done_{step}.json").is_file()  # noqa: E731  a restarted run keeps these
        idle = [sys.executable, "-c", "pass"]
        enc1 = popen(idle if done("encode_students") else
                     [sys.executable, "-m", "models.training.one_sequence_data", "--pack", str(pack()), "--tokenizer",
                      str(STASH / "teacher" / "tokenizer.json"), "-o", str(WORK / "enc.npz"), "--processes",
                      str(max(1, cpus // 2))], "encode_students")
        enc2 = popen(idle if done("encode_teacher") or done("teacher_logits") else
                     [sys.executable, "-m", "models.training.encoded_cache", "--data", str(pack()), "--backbone",
                      str(STASH / "teacher"), "--roles", "train,dev", "-o", str(WORK / "encoded.npz")], "encode_teacher")
        if not done("teacher"):
            folder = teacher_files(args.wait)
            from models.shipping.teacher import recover

            recover(folder, WORK / "teacher")
            mark("teacher")
            log("teacher recovered", s=round(time.time() - t0, 1))
        finish(enc2, "encode_teacher")
        mark("encode_teacher")
        gpus = max(1, int(info.get("gpus") or 0))
        if not done("teacher_logits"):
            cmd = [sys.executable, "-m", "models.shipping.ship_predict", "--checkpoint", str(WORK / "teacher" / "final"),
                   "--data", str(pack()), "--encoded", str(WORK / "encoded.npz"), "--out", str(WORK / "teacher_pred"),
                   "--race-only"]
            if gpus > 1 and args.device != "cpu":
                cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(gpus),
                       "-m", "models.shipping.ship_predict", *cmd[3:]]
            finish(popen(cmd, "teacher_logits"), "teacher_logits")
            shutil.copy(WORK / "teacher_pred" / "logits_race.npz", RESULTS / "logits_race.npz")
            mark("teacher_logits", s=round(time.time() - t0, 1))
            log("teacher logits", s=round(time.time() - t0, 1))
        finish(enc1, "encode_students")
        mark("encode_students")
        plan = [s for s in parse_plan(args.plan) if not done(s["name"])]
        procs = {}
        for s in plan:
            # a process on its own takes every core for its CPU threads, which then spin beside the GPU's
            # work (seen: 35 cores busy, the GPU idle): a few threads each, as torchrun's ranks get
            env = {"OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}
            if args.device != "cpu":
                env["CUDA_VISIBLE_DEVICES"] = ",".join(s["gpus"])
            trained = done(f"train_{s['name']}")  # a restarted run goes on to the export
            procs[s["name"]] = popen(idle if trained else student_cmd(s, args), f"train_{s['name']}", env)
        log("students started", plan=plan, s=round(time.time() - t0, 1))
        errors, threads = {}, []

        def follow(s):
            try:
                finish(procs[s["name"]], f"train_{s['name']}")
                if not (WORK / "students" / s["name"] / "metrics.json").is_file():
                    raise RuntimeError(f"{s['name']}: training ended without its metrics")
                mark(f"train_{s['name']}", s=round(time.time() - t0, 1))
                log("trained", name=s["name"], s=round(time.time() - t0, 1))
                cmd = [sys.executable, "-m", "models.shipping.cpu_reader_ship", "export", "--name", s["name"],
                       "--device", args.device]
                env = {"CUDA_VISIBLE_DEVICES": s["gpus"][0], "OMP_NUM_THREADS": str(max(1, cpus // (2 * len(plan))))}
                finish(popen(cmd, f"export_{s['name']}", env), f"export_{s['name']}")
                mark(s["name"], s=round(time.time() - t0, 1))
                log("exported", name=s["name"], s=round(time.time() - t0, 1))
            except Exception as exc:
                errors[s["name"]] = f"{type(exc).__name__}: {exc}"
                log("FAILED", name=s["name"], error=errors[s["name"]])

        for s in plan:
            th = threading.Thread(target=follow, args=(s,))
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
        mark("all", s=round(time.time() - t0, 1), errors=errors)
        log("all done", s=round(time.time() - t0, 1), errors=errors)
    except Exception as exc:
        log("FAILED", error=f"{type(exc).__name__}: {exc}")
        (RESULTS / "FAILED").write_text(str(exc))
        return 1
    return 0


def start(args) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "models.shipping.cpu_reader_ship", "run", "--plan", args.plan, "--schedule-seconds",
           str(args.schedule_seconds), "--epochs", str(args.epochs), "--device", args.device, "--wait", str(args.wait),
           "--limit", str(args.limit)]
    # a session of its own: the pipeline outlives the call that starts it
    subprocess.Popen(cmd, stdout=open(WORK / "pipeline.log", "w"), stderr=subprocess.STDOUT, start_new_session=True,
                     env={**os.environ, **NCCL_ENV})
    print("pipeline started", flush=True)


def status_text() -> str:
    lines = []
    if (RESULTS / "log.jsonl").is_file():
        lines += (RESULTS / "log.jsonl").read_text().splitlines()[-12:]
    for p in sorted(WORK.glob("*.log")):
        tail = [l for l in p.read_text(errors="replace").splitlines() if l.strip()][-3:]
        lines += [f"{p.name}: {l[:300]}" for l in tail]
    return "\n".join(lines)


def bundle(out: Path) -> None:
    """Every small result in one results.tgz (logs, records, logits, graphs without weights)."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "results.tgz", "w:gz") as tar:
        for p in sorted(RESULTS.rglob("*")):
            if p.is_file() and ".onnx.data" not in p.name and p.stat().st_size < 12 * 1024 * 1024:
                tar.add(p, arcname=str(p.relative_to(RESULTS)))
        for p in sorted(WORK.glob("*.log")):
            tar.add(p, arcname=f"logs/{p.name}")


def wait(args) -> None:
    deadline = time.time() + args.max
    marker = RESULTS / f"done_{args.until}.json"
    while time.time() < deadline and not marker.is_file() and not (RESULTS / "FAILED").is_file():
        time.sleep(3)
    print(status_text(), flush=True)
    print(json.dumps({"reached": marker.is_file(), "failed": (RESULTS / "FAILED").is_file(),
                      "done": sorted(p.stem for p in RESULTS.glob("done_*.json"))}), flush=True)
    if args.out:
        collect(Path(args.out), args.files or [])


def collect(out: Path, files: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for rel in files:  # "<student>/<file>": the student's model files
        name, f = rel.split("/", 1)
        src = RESULTS / name / "model" / f
        if src.is_file():
            shutil.copy(src, out / f"{name}__{f}")
    bundle(out)


def prepare_carry(model_dir: Path, race_pack: Path, out: Path, call_bytes: int) -> list[Path]:
    """This machine, before the calls: the teacher's files (each .xz-packed where that is smaller)
    and the RACE pack laid out in `out`/c1, c2, ... of at most `call_bytes` each, with the
    manifest (sizes, digests) the pipeline checks them against."""
    import hashlib

    tmp = out / "packed"
    tmp.mkdir(parents=True, exist_ok=True)
    entries, payload = [], []
    for f in sorted(model_dir.iterdir()):
        if not f.is_file():
            continue
        data = f.read_bytes()
        entry = {"name": f.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        packed = lzma.compress(data, preset=6) if len(data) > 1_000_000 else None
        if packed is not None and len(packed) < 0.97 * len(data):
            (tmp / (f.name + ".xz")).write_bytes(packed)
            entry["xz_size"] = len(packed)
            payload.append((tmp / (f.name + ".xz"), f"teacher/{f.name}.xz"))
        else:
            payload.append((f, f"teacher/{f.name}"))
        entries.append(entry)
    (tmp / "manifest.json").write_text(json.dumps({"files": entries}, indent=1))
    payload = [(race_pack, "race.jsonl.xz"), (tmp / "manifest.json", "teacher/manifest.json")] + \
        sorted(payload, key=lambda p: -p[0].stat().st_size)
    calls: list[list] = []
    for src, rel in payload:  # first fit, largest first
        size = src.stat().st_size
        for c in calls:
            if sum(x[0].stat().st_size for x in c) + size <= call_bytes:
                c.append((src, rel))
                break
        else:
            calls.append([(src, rel)])
    folders = []
    for i, c in enumerate(calls, 1):
        folder = out / f"c{i}"
        if folder.exists():
            shutil.rmtree(folder)
        for src, rel in c:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, folder / rel)
        folders.append(folder)
    shutil.rmtree(tmp)
    return folders


SENT = WORK / "sent.json"


def collect_next(out: Path, max_bytes: int, with_bundle: bool) -> None:
    """The next model files of the exported students that no earlier call took, up to `max_bytes`
    and 7 files (a call brings back 8: the last is results.tgz or a status line)."""
    out.mkdir(parents=True, exist_ok=True)
    sent = set(json.loads(SENT.read_text())) if SENT.is_file() else set()
    todo = []
    for d in sorted(RESULTS.glob("*/model")):
        if (RESULTS / f"done_{d.parent.name}.json").is_file():
            todo += [p for p in sorted(d.iterdir()) if ".onnx.data" in p.name and str(p) not in sent]
    used, took = 0, []
    for p in todo:
        if len(took) >= 7 or used + p.stat().st_size > max_bytes:
            continue
        shutil.copy(p, out / f"{p.parent.parent.name}__{p.name}")
        used += p.stat().st_size
        took.append(str(p))
    SENT.write_text(json.dumps(sorted(sent | set(took))))
    left = [str(p) for p in todo if str(p) not in took]
    if with_bundle:
        bundle(out)
    print(json.dumps({"took": took, "bytes": used, "left": left}), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.shipping.cpu_reader_ship", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("start", "run"):
        p = sub.add_parser(name)
        p.add_argument("--plan", default="m12:12:0,1:2e-5;m6:6:2:5e-5;m3:3:3:8e-5")
        p.add_argument("--schedule-seconds", type=float, default=540)
        p.add_argument("--epochs", type=int, default=6)
        p.add_argument("--device", default="auto")
        p.add_argument("--wait", type=float, default=900, help="seconds to wait for carried files")
        p.add_argument("--limit", type=int, default=0)
    e = sub.add_parser("export")
    e.add_argument("--name", required=True)
    e.add_argument("--device", default="cuda")
    w = sub.add_parser("wait")
    w.add_argument("--until", default="all")
    w.add_argument("--max", type=float, default=540)
    w.add_argument("--out", default="")
    w.add_argument("--files", nargs="*")
    cn = sub.add_parser("collect-next")
    cn.add_argument("--out", required=True)
    cn.add_argument("--max-mb", type=float, default=58.0)
    cn.add_argument("--bundle", action="store_true", help="also results.tgz (every small record)")
    pc = sub.add_parser("prepare-carry")
    pc.add_argument("--model", default="models/default")
    pc.add_argument("--pack", required=True, help="models.training.race_pack output, recompressed with xz")
    pc.add_argument("--out", default="carry")
    pc.add_argument("--call-mb", type=float, default=56.0)
    c = sub.add_parser("collect")
    c.add_argument("--out", required=True)
    c.add_argument("--files", nargs="*")
    args = ap.parse_args(argv)
    if args.cmd == "start":
        start(args)
    elif args.cmd == "run":
        return run(args)
    elif args.cmd == "export":
        dev = args.device if args.device != "auto" else "cuda"
        print(json.dumps(export_student(args.name, dev if dev != "cpu" else "cpu")))
    elif args.cmd == "wait":
        wait(args)
    elif args.cmd == "collect-next":
        collect_next(Path(args.out), int(args.max_mb * 1_000_000), args.bundle)
    elif args.cmd == "prepare-carry":
        for f in prepare_carry(Path(args.model), Path(args.pack), Path(args.out), int(args.call_mb * 1_000_000)):
            print(f, sum(p.stat().st_size for p in f.rglob("*") if p.is_file()))
    else:
        collect(Path(args.out), args.files or [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
