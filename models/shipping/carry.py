"""Move large files to and from the GPU machines within their limits.

A call carries at most 64 MiB of ignored files and brings back at most 8 files of
16 MiB: a checkpoint or graph travels as numbered parts with a manifest of SHA-256
digests, and is joined (and checked) on the other side.  Pure Python.

    python -m models.shipping.carry split FILE OUT_DIR [--part-mb 45]
    python -m models.shipping.carry join MANIFEST OUT_FILE
    python -m models.shipping.carry fp16 HF_DIR OUT_DIR     # an encoder's weights as fp16 safetensors (torch)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

MANIFEST = "manifest.json"
BACK_LIMIT = 16 * 1024 * 1024  # bytes per file a call brings back


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def split(path: str | Path, out_dir: str | Path, part_bytes: int, first_bytes: int | None = None) -> Path:
    """FILE → OUT_DIR/FILE.partNNN + manifest.json (name, size, digest of the whole and of each part).

    `first_bytes`: a first part of another size (the call that carries it also carries the data)."""
    path, out = Path(path), Path(out_dir)
    if part_bytes <= 0:
        raise ValueError("part size must be positive")
    out.mkdir(parents=True, exist_ok=True)
    parts = []
    with open(path, "rb") as f:
        i = 0
        while True:
            block = f.read(first_bytes if (i == 0 and first_bytes) else part_bytes)
            if not block:
                break
            name = f"{path.name}.part{i:03d}"
            (out / name).write_bytes(block)
            parts.append({"name": name, "size": len(block), "sha256": hashlib.sha256(block).hexdigest()})
            i += 1
    manifest = {"name": path.name, "size": path.stat().st_size, "sha256": _sha(path), "parts": parts}
    (out / f"{path.name}.{MANIFEST}").write_text(json.dumps(manifest, indent=1))
    return out / f"{path.name}.{MANIFEST}"


def join(manifest_path: str | Path, out_file: str | Path) -> Path:
    """The parts next to the manifest, joined in order; ValueError naming the part that is wrong."""
    manifest_path, out_file = Path(manifest_path), Path(out_file)
    m = json.loads(manifest_path.read_text())
    tmp = out_file.with_name(out_file.name + ".joining")
    with open(tmp, "wb") as f:
        for p in m["parts"]:
            part = manifest_path.parent / p["name"]
            if not part.is_file():
                tmp.unlink(missing_ok=True)
                raise ValueError(f"{part}: missing part")
            data = part.read_bytes()
            if len(data) != p["size"] or hashlib.sha256(data).hexdigest() != p["sha256"]:
                tmp.unlink(missing_ok=True)
                raise ValueError(f"{part}: wrong size or digest")
            f.write(data)
    if _sha(tmp) != m["sha256"]:
        tmp.unlink(missing_ok=True)
        raise ValueError(f"{manifest_path}: the joined file's digest differs")
    tmp.replace(out_file)
    return out_file


def fp16_encoder(hf_dir: str | Path, out_dir: str | Path) -> Path:
    """An encoder directory with its weights as one fp16 model.safetensors (half the bytes to carry)."""
    import torch
    from safetensors.torch import load_file, save_file

    src, out = Path(hf_dir), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if (src / "model.safetensors").is_file():
        state = load_file(str(src / "model.safetensors"))
    else:
        state = torch.load(src / "pytorch_model.bin", map_location="cpu", weights_only=True)
    save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in state.items()},
              str(out / "model.safetensors"))
    for f in src.iterdir():
        if f.is_file() and f.suffix in (".json", ".txt") and f.name != "model.safetensors":
            shutil.copy(f, out / f.name)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.shipping.carry", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split")
    s.add_argument("file")
    s.add_argument("out_dir")
    s.add_argument("--part-mb", type=float, default=45.0, help="MB per part (16 or less to bring back)")
    s.add_argument("--first-mb", type=float, default=0, help="MB of the first part (default: --part-mb)")
    j = sub.add_parser("join")
    j.add_argument("manifest")
    j.add_argument("out_file")
    h = sub.add_parser("fp16")
    h.add_argument("hf_dir")
    h.add_argument("out_dir")
    args = ap.parse_args(argv)
    if args.cmd == "split":
        print(split(args.file, args.out_dir, int(args.part_mb * 1_000_000),
                    int(args.first_mb * 1_000_000) if args.first_mb else None))
    elif args.cmd == "join":
        print(join(args.manifest, args.out_file))
    else:
        print(fp16_encoder(args.hf_dir, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
