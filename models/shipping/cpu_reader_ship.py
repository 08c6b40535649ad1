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

Here: the pipeline in its order (`run`) and what each call does; its shared folders and small steps
are `models.shipping.cpu_reader_steps`, a student's export `models.shipping.cpu_reader_export`, the
files that travel `models.shipping.cpu_reader_files`.

    python -m models.shipping.cpu_reader_ship start --plan "m12:12:0,1:2e-5;m6:6:2:5e-5;m3:3:3:8e-5" --schedule-seconds 540
    python -m models.shipping.cpu_reader_ship wait --until all --max 540 --out $OUT
    python -m models.shipping.cpu_reader_ship collect --out $OUT --files m12/model.int8.onnx.data0 ...
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from models.shipping.cpu_reader_export import export_student
from models.shipping.cpu_reader_files import collect, collect_next, prepare_carry
from models.shipping.cpu_reader_steps import (NCCL_ENV, RESULTS, STASH, WORK, finish, log, mark, pack, parse_plan,
                                              popen, step_env, student_cmd, teacher_files, wait_for)
from models.shipping.teacher import recover


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
