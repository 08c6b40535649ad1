"""Which ONNX Runtime provider runs a model, and how many CPU threads.

CUDA when onnxruntime-gpu is installed and a GPU answers, else CPU — always with a
message that says which and why.  On CPU the int8 graph is preferred, on GPU the fp16 graph.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from desktop.domain.errors import ModelError

DEVICES = ("auto", "cpu", "cuda")
CPU_ORDER = ("int8", "fp32", "fp16")
GPU_ORDER = ("fp16", "fp32", "int8")


def ort():
    import onnxruntime as ort

    ort.set_default_logger_severity(3)  # its warnings about unused initializers are noise here
    return ort


def choose_provider(device: str = "auto") -> tuple[str, str]:
    """(provider, reason) before any session exists."""
    if device not in DEVICES:
        raise ModelError(f"unknown device {device!r}; choose auto, cpu or cuda")
    if device == "cpu":
        return "CPUExecutionProvider", "CPU, as asked"
    available = ort().get_available_providers()
    if "CUDAExecutionProvider" in available:
        return "CUDAExecutionProvider", "CUDA: onnxruntime-gpu is installed"
    why = ("this onnxruntime has no CUDA provider (on a machine with an NVIDIA GPU, replace it: "
           "pip uninstall -y onnxruntime && pip install onnxruntime-gpu)")
    if device == "cuda":
        return "CPUExecutionProvider", f"CUDA was asked for but {why}; using the CPU instead"
    return "CPUExecutionProvider", f"CPU: {why}"


MAX_DEFAULT_WORKERS = 8


def default_workers() -> int:
    """Concurrent single-threaded runs on the CPU: MCQLENS_THREADS, else one per CPU (at most 8).

    One per CPU keeps every core of a bigger machine busy on batch scoring (the previous
    runtime's intra-op threads used them all too); an interactive question has only 4-5
    sequences, so more than 8 would only sit idle.
    """
    env = os.environ.get("MCQLENS_THREADS")
    return max(1, int(env)) if env else max(1, min(MAX_DEFAULT_WORKERS, os.cpu_count() or 1))


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def pool(workers: int) -> ThreadPoolExecutor | None:
    """One shared pool per size (models are loaded again and again in a long session)."""
    if workers <= 1:
        return None
    with _POOLS_LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mcqlens-ort")
        return _POOLS[workers]
