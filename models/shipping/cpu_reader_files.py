"""The files that travel for the CPU reader's build: before it, the teacher's files and the RACE pack
laid out in one folder per call (`prepare_carry`); after it, the students' model files a few per call
(`collect`, `collect_next`) and every small record in one results.tgz (`bundle`).
"""
from __future__ import annotations

import hashlib
import json
import lzma
import shutil
import tarfile
from pathlib import Path

from models.shipping.cpu_reader_steps import RESULTS, WORK


def bundle(out: Path) -> None:
    """Every small result in one results.tgz (logs, records, logits, graphs without weights)."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "results.tgz", "w:gz") as tar:
        for p in sorted(RESULTS.rglob("*")):
            if p.is_file() and ".onnx.data" not in p.name and p.stat().st_size < 12 * 1024 * 1024:
                tar.add(p, arcname=str(p.relative_to(RESULTS)))
        for p in sorted(WORK.glob("*.log")):
            tar.add(p, arcname=f"logs/{p.name}")


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
