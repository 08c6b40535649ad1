"""One record per benchmark run, written as JSON under docs/bench_runs/.

docs/benchmarks.md is generated from these files alone (`python benchmarks/render_docs.py`),
so every figure in the docs has a run behind it.  A run holds:

- ``benchmark``, ``command`` (as typed), ``date`` (UTC, ISO), ``machine`` (CPU model,
  cores, GPU if any, load average at the start and the end);
- ``model``: the model the headline used — its directory, the sha256 of its card and graph
  files, and whether it is the shipped default (``models/default``);
- ``headline``: rows measured on the product's own path (``subject: "product"``), each
  with its target and whether it was met;
- ``context``: anything else worth printing beside them (a stand-in graph, random weights,
  another runtime), labelled by its ``subject``; a context row never carries ``met``;
- ``notes`` (sentences without figures of their own) and ``raw`` (every measurement).

Rule enforced by tests/test_benchmark_docs.py: a row may say ``met`` only when its subject is
the product and, where a model is involved, that model is the one shipped in models/default.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import platform
import shlex
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "docs" / "bench_runs"
SHIPPED = ROOT / "models" / "default"
PRODUCT = "product"


@dataclass
class Row:
    """One figure: what was measured, on what, against which target."""

    label: str
    value: float | None
    unit: str
    subject: str = PRODUCT  # "product" or a description of the stand-in ("stand-in: random weights")
    target: str | None = None  # e.g. "< 1500 ms"; None: no target
    met: bool | None = None  # only for subject == "product"
    detail: str = ""  # how it was measured, in words (no figures of its own)

    def __post_init__(self):
        if self.subject != PRODUCT and self.met is not None:
            raise ValueError(f"{self.label}: a stand-in ({self.subject}) never carries 'met'")
        if self.met is not None and self.target is None:
            raise ValueError(f"{self.label}: 'met' needs a target")


@dataclass
class Run:
    benchmark: str
    command: str
    headline: list[Row] = field(default_factory=list)
    context: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict)
    model: dict | None = None
    machine: dict = field(default_factory=dict)
    date: str = ""


def model_fingerprint(model_dir: Path | str) -> dict:
    """sha256 over a model directory's card and graph files (with a graph's external data files,
    `model.int8.onnx.data0`...: they hold its weights), and whether it is the shipped one."""
    d = Path(model_dir)
    h = hashlib.sha256()

    def graph_files(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")
                      and (p.suffix in {".onnx", ".json"} or ".onnx.data" in p.name))
    files = graph_files(d)
    try:  # a part that reads one format (the card's 'readers') is part of the model
        readers = json.loads((d / "card.json").read_text(encoding="utf-8")).get("readers") or {}
    except (OSError, ValueError, AttributeError):
        readers = {}
    for name in sorted(set(readers.values()) if isinstance(readers, dict) else ()):
        if isinstance(name, str) and (d / name).is_dir():
            files += graph_files(d / name)
    for p in files:
        h.update(str(p.relative_to(d)).encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    try:
        shipped = d.resolve() == SHIPPED.resolve()
    except OSError:
        shipped = False
    rel = os.path.relpath(d.resolve(), ROOT) if d.resolve().is_relative_to(ROOT) else str(d)
    return {"dir": rel, "sha256": h.hexdigest(), "shipped": shipped, "files": [str(p.relative_to(d)) for p in files]}


def shipped_fingerprint() -> str | None:
    return model_fingerprint(SHIPPED)["sha256"] if (SHIPPED / "card.json").is_file() else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# set by benchmarks/cpuid_mask/run_avx2.sh: AVX-512, VNNI and AMX hidden from the CPUID of the
# process measured (/proc/cpuinfo still lists them; the record lists what the programs saw)
CPUID_MASK = "MCQLENS_CPUID_MASK"


def cpu_flags() -> list[str]:
    """The CPU's vector and int8 extensions (int8 speed and results depend on VNNI/AMX)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split(":", 1)[-1].split()
    except OSError:
        return []
    listed = sorted(x for x in flags if x.startswith(("avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx", "avx2")))
    if os.environ.get(CPUID_MASK):  # benchmarks/cpuid_mask: the programs measured saw an AVX2-only CPU
        return [x for x in listed if x == "avx2"]
    return listed


def machine(load_start: tuple[float, float, float], gpu: str | None = None) -> dict:
    out = {"cpu": _cpu_model(), "cpu_flags": cpu_flags(), "cores": os.cpu_count(), "gpu": gpu,
           "python": platform.python_version(),
           "load_average_start": [round(x, 2) for x in load_start],
           "load_average_end": [round(x, 2) for x in os.getloadavg()]}
    if os.environ.get(CPUID_MASK):
        out["cpuid_mask"] = os.environ[CPUID_MASK]
    return out


def _clean(x):
    """JSON without NaN/Infinity (they would make the file unreadable to strict parsers)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write(run: Run, load_start: tuple[float, float, float], gpu: str | None = None,
          out_dir: Path | None = None) -> Path:
    """Write the run to docs/bench_runs/<benchmark>_<UTC time>.json and return the path."""
    run.machine = run.machine or machine(load_start, gpu)
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    run.date = run.date or now.isoformat()
    out = Path(out_dir or os.environ.get("MCQLENS_BENCH_RUNS") or RUNS)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{run.benchmark}_{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    data = _clean(asdict(run))
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"run written to {os.path.relpath(path, ROOT) if path.is_relative_to(ROOT) else path}", file=sys.stderr)
    return path


def command_line(script: str, argv: list[str] | None) -> str:
    args = sys.argv[1:] if argv is None else argv
    # a run through benchmarks/cpuid_mask/run_avx2.sh says so: the same command measures another CPU
    mask = ["benchmarks/cpuid_mask/run_avx2.sh"] if os.environ.get(CPUID_MASK) else []
    return " ".join([*mask, "python", f"benchmarks/{script}", *map(shlex.quote, args)])


def load_all(runs_dir: Path = RUNS) -> list[dict]:
    out = []
    for p in sorted(runs_dir.glob("*.json")):
        d = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(d, dict) and "benchmark" in d and "headline" in d:
            d["_file"] = p.name
            out.append(d)
    return out
