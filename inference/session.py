"""ONNX Runtime sessions: which provider, which graph, and running [B, O, T] batches.

CUDA when onnxruntime-gpu is installed and a GPU answers, else CPU — always with a
message that says which and why.  On CPU the int8 graph is preferred, on GPU the fp16
graph (derived on first GPU use from the fp32 graph, or from the int8 graph with its
weights dequantized, when the model ships none and the `onnx` package is present).
Only the inputs the graph declares are fed; on GPU
inputs and outputs go through IO binding.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from desktop.domain.errors import ModelError
from inference.card import ModelCard, check_graph_inputs
from inference.formatting import Encoded

DEVICES = ("auto", "cpu", "cuda")
CPU_ORDER = ("int8", "fp32", "fp16")
GPU_ORDER = ("fp16", "fp32", "int8")


def _ort():
    import onnxruntime as ort

    ort.set_default_logger_severity(3)  # its warnings about unused initializers are noise here
    return ort


def choose_provider(device: str = "auto") -> tuple[str, str]:
    """(provider, reason) before any session exists."""
    if device not in DEVICES:
        raise ModelError(f"unknown device {device!r}; choose auto, cpu or cuda")
    if device == "cpu":
        return "CPUExecutionProvider", "CPU, as asked"
    available = _ort().get_available_providers()
    if "CUDAExecutionProvider" in available:
        return "CUDAExecutionProvider", "CUDA: onnxruntime-gpu is installed"
    why = ("this onnxruntime has no CUDA provider (install onnxruntime-gpu, the `gpu` extra, "
           "on a machine with an NVIDIA GPU)")
    if device == "cuda":
        return "CPUExecutionProvider", f"CUDA was asked for but {why}; using the CPU instead"
    return "CPUExecutionProvider", f"CPU: {why}"


class Runner:
    """One ONNX Runtime session over the model graph that suits the device."""

    def __init__(self, directory: str | Path, card: ModelCard, device: str = "auto",
                 precision: str | None = None, threads: int | None = None):
        ort = _ort()
        self.directory = Path(directory)
        self.card = card
        provider, reason = choose_provider(device)
        order = GPU_ORDER if provider == "CUDAExecutionProvider" else CPU_ORDER
        if precision is not None:
            if precision not in card.files:
                raise ModelError(f"{self.directory}: the card ships no {precision} graph "
                                 f"(it has {', '.join(card.files)})")
            order = (precision,)
        on_cuda = provider == "CUDAExecutionProvider"
        usable = [p for p in order if p in card.files or (p == "fp16" and on_cuda and self._can_derive_fp16())]
        if not usable:
            raise ModelError(f"{self.directory}: no usable graph among {', '.join(order)}")
        self.precision = usable[0]
        try:
            path = self._graph_path(self.precision)
        except OSError as exc:
            raise ModelError(f"{self.directory}: cannot write the fp16 graph for the GPU ({exc})") from exc
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads or os.environ.get("MCQLENS_THREADS"):
            opts.intra_op_num_threads = int(threads or os.environ["MCQLENS_THREADS"])
        if os.environ.get("MCQLENS_ORT_SPIN") != "1":
            # idle worker threads sleep instead of spinning: on a laptop shared with the
            # workbench (and on this shared 2-core machine: 488 -> 322 ms best case for a
            # standard question) spinning only steals the cores the work needs
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        providers = [provider] if provider == "CPUExecutionProvider" else [provider, "CPUExecutionProvider"]
        try:
            self.session = ort.InferenceSession(str(path), sess_options=opts, providers=providers)
        except Exception as exc:
            raise ModelError(f"{path}: ONNX Runtime cannot load this graph ({_first_line(exc)}); "
                             "the file is missing, truncated or corrupt") from exc
        used = self.session.get_providers()[0]
        if provider == "CUDAExecutionProvider" and used != provider:
            reason = "CUDA provider present but no usable GPU answered; using the CPU instead"
        self.provider = used
        self.graph_file = path.name
        self.message = f"{reason} ({self.precision} graph {path.name})"
        self.input_names = [i.name for i in self.session.get_inputs()]
        check_graph_inputs(card, self.input_names, path.name)
        outputs = [o.name for o in self.session.get_outputs()]
        if "logits" not in outputs:
            raise ModelError(f"{path}: the graph has no 'logits' output (it has {outputs})")

    @property
    def on_gpu(self) -> bool:
        return self.provider == "CUDAExecutionProvider"

    def _can_derive_fp16(self) -> bool:
        try:
            import onnx  # noqa: F401
            from onnxruntime.transformers.onnx_model import OnnxModel  # noqa: F401
        except ImportError:
            return False
        return "fp32" in self.card.files or "int8" in self.card.files

    def _graph_path(self, precision: str) -> Path:
        if precision in self.card.files:
            return self.directory / self.card.files[precision]
        return derive_fp16(self.directory, self.card)

    def logits(self, enc: Encoded) -> np.ndarray:
        """[B, O] float64 logits; padding options are −inf."""
        feeds = enc.feeds(self.input_names)
        try:
            if self.on_gpu:
                io = self.session.io_binding()
                for name, arr in feeds.items():
                    io.bind_cpu_input(name, np.ascontiguousarray(arr))
                io.bind_output("logits", "cuda")
                self.session.run_with_iobinding(io)
                out = io.copy_outputs_to_cpu()[0]
            else:
                out = self.session.run(["logits"], feeds)[0]
        except Exception as exc:
            raise ModelError(f"{self.graph_file}: scoring failed ({_first_line(exc)})") from exc
        out = np.asarray(out, dtype=np.float64).reshape(enc.option_mask.shape)
        return np.where(enc.option_mask, out, -np.inf)


def derive_fp16(directory: Path, card: ModelCard) -> Path:
    """An fp16 graph from the shipped fp32 graph (or the int8 one, dequantized).

    Cached in the user's cache folder ($XDG_CACHE_HOME/mcqlens/<model id>/), never in the
    model directory: that may be read-only, or a checkout whose size must not grow.
    Rebuilt when the source graph is newer than the cached one.
    """
    import onnx

    from inference.dequantize import dequantize_model, to_fp16

    source = directory / card.files.get("fp32", card.files.get("int8", ""))
    safe_id = "".join(c if c.isalnum() or c in "-_." else "_" for c in card.id) or "model"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcqlens" / safe_id
    target = cache / "model.fp16.onnx"
    if target.is_file() and target.stat().st_mtime >= source.stat().st_mtime:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    model = onnx.load(str(source))
    if "fp32" not in card.files:
        model = dequantize_model(model)
    partial = target.with_suffix(".partial")
    onnx.save(to_fp16(model), str(partial))
    partial.replace(target)  # a killed run never leaves a half-written graph behind
    return target


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
