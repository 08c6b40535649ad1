"""ONNX Runtime sessions: which provider, which graph, and running [B, O, T] batches.

CUDA when onnxruntime-gpu is installed and a GPU answers, else CPU — always with a
message that says which and why.  On CPU the int8 graph is preferred, on GPU the fp16
graph (derived on first GPU use from the fp32 graph, or from the int8 graph with its
weights dequantized, when the model ships none and the `onnx` package is present).
Only the inputs the graph declares are fed; on GPU
inputs and outputs go through IO binding.

On CPU the graph is first rewritten into its CPU layout (`inference.cpu_graph`: attention
without a mask, so that ONNX Runtime takes its flash-attention path, and LayerNorm
instead of the slow SkipLayerNormalization kernel), cached in the user's cache folder.
Such a graph is exact only for unpadded input, so each sequence of a [B, O, T] batch is
run on its own, trimmed to its length (sequences of equal length share a run), several
runs at once on a small thread pool with one ONNX Runtime thread each: on 2 cores two
concurrent single-threaded runs beat one run on two threads (MiniLM-L6 int8, a standard
question: 96 vs 103 ms median).  When the rewrite fails the shipped graph is used and the
message says why.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from desktop.domain.errors import ModelError
from inference.card import ModelCard, check_graph_inputs
from inference.formatting import Encoded

DEVICES = ("auto", "cpu", "cuda")
# On the GPU, token lengths are padded up to a multiple of this (the attention mask hides
# the padding, so the logits do not change).  ONNX Runtime's CUDA Attention pays 40-80 ms
# the first time it meets a sequence length (measured on an H200: 0.7 ms for a question
# whose shape was seen before, 42-77 ms for a new one, whatever the arena or attention
# kernel settings); with buckets an annotator's questions share 8 lengths per format.
GPU_LENGTH_BUCKET = 64
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


def _pool(workers: int) -> ThreadPoolExecutor | None:
    """One shared pool per size (models are loaded again and again in a long session)."""
    if workers <= 1:
        return None
    with _POOLS_LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mcqlens-ort")
        return _POOLS[workers]


def graph_is_unpadded(session) -> bool:
    """Whether a loaded graph must be fed unpadded sequences (`inference.cpu_graph`)."""
    from inference.cpu_graph import UNPADDED

    return session.get_modelmeta().custom_metadata_map.get(UNPADDED) == "1"


# Sequences of equal length share a run up to this many tokens.  That pays for short ones
# only (MiniLM-L6 int8, 1 thread, 40 tokens: 4.3 ms alone, 3.5 ms each four at a time; 460
# tokens: 58 ms either way), and a shared run is one worker's: a question whose four
# alternatives had the same length once ran all four on one worker (p95 183 → 114 ms).
MAX_TOKENS_PER_RUN = 512


def unpadded_logits(run, enc: Encoded, names, pool: ThreadPoolExecutor | None = None, workers: int = 1,
                    max_tokens: int = MAX_TOKENS_PER_RUN) -> np.ndarray:
    """[B, O] float32 logits of a graph fed each sequence trimmed to its own length.

    `run(feeds) -> logits` runs the graph on [1, k, L] arrays (k sequences of length L).
    Padding options are not run (their logit is 0 here; the caller masks them).  Runs go
    to `pool` (of `workers` threads) when given, the longest first, so that the workers
    finish together; a group of equal lengths is split so that every worker gets a share.
    """
    feeds = enc.feeds(names)
    lengths = enc.lengths if enc.lengths is not None else enc.attention_mask.sum(-1)
    groups: dict[int, list[tuple[int, int]]] = {}
    for b, o in zip(*np.nonzero(enc.option_mask)):
        groups.setdefault(int(lengths[b, o]), []).append((int(b), int(o)))
    workers = workers if pool is not None else 1
    tasks = []
    for length, cells in groups.items():
        k = max(1, min(max_tokens // max(length, 1), -(-len(cells) // workers)))
        for i in range(0, len(cells), k):
            part = np.array(cells[i:i + k])
            tasks.append((length, part[:, 0], part[:, 1]))
    tasks.sort(key=lambda t: -t[0] * len(t[1]))

    def one(task):
        length, bs, os_ = task
        return np.asarray(run({n: np.ascontiguousarray(a[bs, os_, :length][None]) for n, a in feeds.items()}))

    out = np.zeros(enc.option_mask.shape, dtype=np.float32)
    results = pool.map(one, tasks) if pool is not None and len(tasks) > 1 else map(one, tasks)
    for (length, bs, os_), got in zip(tasks, results):
        out[bs, os_] = got.reshape(-1)
    return out


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
        env_threads = os.environ.get("MCQLENS_THREADS")
        self.threads = int(threads or env_threads) if (threads or env_threads) else None
        providers = [provider] if provider == "CPUExecutionProvider" else [provider, "CPUExecutionProvider"]
        layout = ""
        self.recipe = None
        self.attention_layers: tuple[int, ...] = ()  # graph output of the reader's attention, for the evidence
        self.one_sequence = card.layout == "one-sequence"
        stored = not on_cuda and self.precision == "int8" and _stored_rows(path)
        if on_cuda:
            self.session = self._session(ort, path, providers, unpadded=False)
        elif stored:
            # int8 weights with float16 outlier rows: the arithmetic is chosen from the CPU's flags
            # and derived in memory at load (inference.cpu_recipes)
            from inference import cpu_recipes

            allowed = (card.extra.get("quantization") or {}).get("runtime") or list(cpu_recipes.RECIPES)
            self.recipe, why = cpu_recipes.choose(allowed)
            try:
                import onnx

                graph = cpu_recipes.derive(onnx.load(str(path)), self.recipe)
                self.attention_layers = _evidence_attention(card)
                if self.attention_layers and self.one_sequence:
                    from inference import option_attention

                    option_attention.add(graph, list(self.attention_layers))
            except Exception as exc:
                raise ModelError(f"{path}: cannot read the stored int8 weights ({_first_line(exc)})") from exc
            layout = f"{why}; {self.recipe} graph derived at load"
            intra = self.threads or default_workers() if self.one_sequence else 1
            self.session = self._session(ort, path, providers, unpadded=True, model_bytes=graph.SerializeToString(),
                                         intra=intra)
        else:
            cpu_path, layout, unpadded = self._cpu_layout(path)
            try:
                self.session = self._session(ort, cpu_path, providers, unpadded)
                path = cpu_path
            except ModelError as exc:
                if cpu_path == path:
                    raise
                # the cached graph is damaged (cut short, overwritten): derive it again, once,
                # instead of warning on every run that the shipped graph is used
                rebuilt, layout, unpadded = self._cpu_layout(path, rebuild=True)
                try:
                    if rebuilt == path:
                        raise exc
                    self.session = self._session(ort, rebuilt, providers, unpadded)
                    path = rebuilt
                    layout = f"{layout} (the cached graph was damaged and is rebuilt)"
                except ModelError as exc2:
                    layout = f"CPU layout not used: {exc2}; the shipped graph runs as it is"
                    self.session = self._session(ort, path, providers, unpadded=False)
        used = self.session.get_providers()[0]
        if provider == "CUDAExecutionProvider" and used != provider:
            reason = "CUDA provider present but no usable GPU answered; using the CPU instead"
        # --device cuda that ends on the CPU: the commands print this on a line of its own
        self.fallback = reason if device == "cuda" and used != "CUDAExecutionProvider" else None
        self.provider = used
        self.graph_file = path.name
        self.unpadded = graph_is_unpadded(self.session)
        self.workers = 1
        if self.one_sequence and not self.on_gpu:
            layout = f"{layout}; one sequence per question, {self.threads or default_workers()} threads"
        elif self.unpadded and not self.on_gpu:
            self.workers = self.threads or default_workers()
            how = (f"unpadded sequences, {self.workers} concurrent runs of 1 thread" if self.workers > 1
                   else "unpadded sequences, 1 run at a time")
            layout = f"{layout}; {how}" if layout else how
        elif self.unpadded:
            layout = f"{layout}; unpadded sequences" if layout else "unpadded sequences"
        self.pool = _pool(self.workers)
        # token lengths padded up to a multiple of this before each run (1: as they come)
        self.length_bucket = GPU_LENGTH_BUCKET if self.on_gpu and not self.unpadded else 1
        self.message = f"{reason} ({self.precision} graph {path.name}{'; ' + layout if layout else ''})"
        self.input_names = [i.name for i in self.session.get_inputs()]
        check_graph_inputs(card, self.input_names, path.name)
        outputs = [o.name for o in self.session.get_outputs()]
        if "logits" not in outputs:
            raise ModelError(f"{path}: the graph has no 'logits' output (it has {outputs})")

    def _cpu_layout(self, path: Path, rebuild: bool = False) -> tuple[Path, str, bool]:
        """(graph to load, what was done or why not, whether it takes unpadded sequences
        only); the shipped graph when the rewrite fails — never raises."""
        from inference import cpu_graph

        if not path.is_file():
            return path, "", False  # the session's load error names the missing file
        if os.environ.get("MCQLENS_CPU_LAYOUT") == "0":
            return path, "CPU layout switched off (MCQLENS_CPU_LAYOUT=0)", False
        try:
            derived, summary, unpadded = cpu_graph.derive(path, self.card, rebuild=rebuild)
        except Exception as exc:  # no onnx, an unreadable graph, a read-only cache: keep the shipped graph
            return path, f"CPU layout not derived ({_first_line(exc)}); the shipped graph runs as it is", False
        if derived == path:
            return path, ("" if summary == cpu_graph.NOTHING else f"CPU layout as shipped: {summary}"), unpadded
        return derived, f"CPU layout derived from {path.name}: {summary}", unpadded

    def _session(self, ort, path: Path, providers, unpadded: bool, model_bytes: bytes | None = None,
                 intra: int | None = None):
        on_cpu = providers == ["CPUExecutionProvider"]

        def create(intra: int | None):
            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            if intra:
                opts.intra_op_num_threads = intra
            if os.environ.get("MCQLENS_ORT_SPIN") != "1":
                # idle worker threads sleep instead of spinning: on a laptop shared with the
                # workbench (and on this shared 2-core machine: 488 -> 322 ms best case for a
                # standard question) spinning only steals the cores the work needs
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            kwargs = {}
            if on_cpu:
                from inference.cpu_graph import DISABLED_OPTIMIZERS

                # ONNX Runtime's CPU SkipLayerNormalization is slow: never fuse it back at load
                kwargs["disabled_optimizers"] = DISABLED_OPTIMIZERS
            try:
                return ort.InferenceSession(model_bytes if model_bytes is not None else str(path), sess_options=opts,
                                            providers=providers, **kwargs)
            except Exception as exc:
                weights = external_data_problem(path)
                if weights:
                    raise ModelError(f"{weights}; {path.name} cannot load without it") from exc
                raise ModelError(f"{path}: ONNX Runtime cannot load this graph ({_first_line(exc)}); "
                                 "the file is missing, truncated or corrupt") from exc

        # unpadded sequences run side by side, one thread each (see unpadded_logits); a
        # graph that takes padded batches runs one batch at a time on `threads` threads
        if intra is not None:
            return create(intra)
        session = create(1 if unpadded and on_cpu else self.threads)
        if on_cpu and graph_is_unpadded(session) != unpadded:  # the cache's record was wrong
            session = create(1 if not unpadded else self.threads)
        return session

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
        from inference.card import files_directory

        if precision in self.card.files:
            return files_directory(self.directory, self.card) / self.card.files[precision]
        return derive_fp16(files_directory(self.directory, self.card), self.card)

    def _run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        if self.length_bucket > 1 and not self.unpadded:  # an unpadded graph has no mask to hide padding
            feeds = pad_to_bucket(feeds, self.length_bucket, self.card.max_length)
        if self.on_gpu:
            io = self.session.io_binding()
            for name, arr in feeds.items():
                io.bind_cpu_input(name, np.ascontiguousarray(arr))
            io.bind_output("logits", "cuda")
            self.session.run_with_iobinding(io)
            return io.copy_outputs_to_cpu()[0]
        return self.session.run(["logits"], feeds)[0]

    def logits_one(self, batch, extra: tuple[str, ...] = ()):
        """[B, K] float64 logits of a one-sequence batch (`inference.one_sequence.Batch`); a question's
        missing alternatives are −inf.  Unpadded on the CPU, each question runs alone: the int8
        recipe's activation scale is taken per run, so a question's numbers never depend on which
        others were scored with it.
        With `extra` output names ([B, K, T] each, e.g. `inference.option_attention.OUTPUT`):
        (logits, {name: array}), the arrays zero beyond each question's length."""
        names = self.input_names
        out = np.full(batch.option_mask.shape, -np.inf)
        more = {e: np.zeros(batch.option_mask.shape + batch.input_ids.shape[1:], np.float32) for e in extra}
        try:
            if self.unpadded and not self.on_gpu:
                for b, n in enumerate(batch.lengths.tolist()):
                    rows = [b]
                    feeds = {k: np.ascontiguousarray(v[rows, :n]) for k, v in batch.feeds(names).items()}
                    got = self._run_outputs(feeds, ("logits", *extra))
                    z = np.asarray(got[0], dtype=np.float64)
                    out[rows, : z.shape[1]] = z
                    for e, arr in zip(extra, got[1:]):
                        more[e][np.ix_(rows, range(arr.shape[1]), range(n))] = arr
            else:
                got = self._run_outputs(batch.feeds(names), ("logits", *extra))
                z = np.asarray(got[0], dtype=np.float64)
                out[:, : z.shape[1]] = z
                for e, arr in zip(extra, got[1:]):
                    more[e][:, : arr.shape[1], : arr.shape[2]] = arr
        except Exception as exc:
            raise ModelError(f"{self.graph_file}: scoring failed ({_first_line(exc)})") from exc
        logits = np.where(batch.option_mask, out, -np.inf)
        return (logits, more) if extra else logits

    def _run_outputs(self, feeds: dict[str, np.ndarray], outputs: tuple[str, ...]) -> list[np.ndarray]:
        if outputs == ("logits",):
            return [self._run(feeds)]
        if self.on_gpu:
            if self.length_bucket > 1 and not self.unpadded:
                feeds = pad_to_bucket(feeds, self.length_bucket, self.card.max_length)
            io = self.session.io_binding()
            for name, arr in feeds.items():
                io.bind_cpu_input(name, np.ascontiguousarray(arr))
            for name in outputs:
                io.bind_output(name, "cuda")
            self.session.run_with_iobinding(io)
            return io.copy_outputs_to_cpu()
        return self.session.run(list(outputs), feeds)

    def logits(self, enc: Encoded) -> np.ndarray:
        """[B, O] float64 logits; padding options are −inf."""
        try:
            if self.unpadded:
                out = unpadded_logits(self._run, enc, self.input_names, self.pool, self.workers)
            else:
                out = self._run(enc.feeds(self.input_names))
        except Exception as exc:
            raise ModelError(f"{self.graph_file}: scoring failed ({_first_line(exc)})") from exc
        out = np.asarray(out, dtype=np.float64).reshape(enc.option_mask.shape)
        return np.where(enc.option_mask, out, -np.inf)


def _evidence_attention(card) -> tuple[int, ...]:
    """The layers whose attention the card's evidence settings weigh in (none: no extra output)."""
    from inference.evidence_choice import settings_for

    st = settings_for(card)
    return tuple(st.attention_layers) if st.attention_weight > 0 else ()


def _stored_rows(path: Path) -> bool:
    """Whether the graph holds int8 weights with float16 outlier rows (`models.int8_rows`)."""
    try:
        import onnx

        meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    except Exception:
        return False
    return meta.get("mcqlens.int8_recipe") == "int8-rows"


def bucketed(length: int, bucket: int, cap: int) -> int:
    """`length` rounded up to a multiple of `bucket`, never past `cap` (nor below `length`)."""
    if bucket <= 1:
        return length
    return max(length, min(-(-length // bucket) * bucket, cap))


def pad_to_bucket(feeds: dict[str, np.ndarray], bucket: int, cap: int) -> dict[str, np.ndarray]:
    """[B, O, T] inputs with T padded (zeros: masked, type 0) to its bucket."""
    t = next(iter(feeds.values())).shape[-1]
    width = bucketed(t, bucket, cap)
    if width == t:
        return feeds
    return {n: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - t)]) for n, a in feeds.items()}


def derive_fp16(directory: Path, card: ModelCard) -> Path:
    """An fp16 graph from the shipped fp32 graph (or the int8 one, dequantized).

    Cached in the user's cache folder ($XDG_CACHE_HOME/mcqlens/<model id>/), never in the
    model directory: that may be read-only, or a checkout whose size must not grow.
    Rebuilt when the source graph is newer than the cached one.  A source in the CPU
    layout (`inference.cpu_graph`: attention without a mask) gets its mask back, so that
    the GPU runs padded batches.
    """
    import onnx

    from inference.cpu_graph import cache_folder, is_unpadded, padded
    from inference.dequantize import dequantize_model, to_fp16

    source = directory / card.files.get("fp32", card.files.get("int8", ""))
    cache = cache_folder(card)
    target = cache / "model.fp16.onnx"
    if target.is_file() and target.stat().st_mtime >= source.stat().st_mtime:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    model = onnx.load(str(source))
    if "fp32" not in card.files:
        model = dequantize_model(model)
    if is_unpadded(model):
        model = padded(model)
    partial = target.with_suffix(".partial")
    onnx.save(to_fp16(model), str(partial))
    partial.replace(target)  # a killed run never leaves a half-written graph behind
    return target


def external_data_problem(path: Path) -> str | None:
    """What is wrong with the files holding a graph's weights as ONNX external data
    (`model.int8.onnx.data0`...): '<file>: missing' or '<file>: cut short (N of M bytes)';
    None when they are whole, the graph keeps its weights inside, or onnx is absent.
    Asked only after a load failed: ONNX Runtime's own message does not always name the file."""
    try:
        import onnx
        from onnx.external_data_helper import ExternalDataInfo, uses_external_data

        graph = onnx.load(str(path), load_external_data=False)
    except Exception:
        return None
    needed: dict[str, int] = {}
    for t in graph.graph.initializer:
        if uses_external_data(t):
            info = ExternalDataInfo(t)
            end = int(info.offset or 0) + int(info.length or 0)
            needed[info.location] = max(needed.get(info.location, 0), end)
    for location, end in sorted(needed.items()):
        file = path.parent / location
        if not file.is_file():
            return f"{file}: missing (it holds weights of {path.name})"
        size = file.stat().st_size
        if size < end:
            return f"{file}: cut short ({size:,} of {end:,} bytes; it holds weights of {path.name})"
    return None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
