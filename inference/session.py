"""ONNX Runtime sessions: one `Runner` over the graph that suits the device.

Which provider and how many threads: `inference.providers`; only the inputs the graph
declares are fed; on GPU inputs and outputs go through IO binding (the fp16 graph and the
length buckets: `inference.gpu_graph`).  On CPU the graph is first rewritten into its CPU
layout (`inference.cpu_graph`: attention without a mask, so that ONNX Runtime takes its
flash-attention path, and LayerNorm instead of the slow SkipLayerNormalization kernel), cached
in the user's cache folder; such a graph runs unpadded sequences (`inference.unpadded`).  When
the rewrite fails the shipped graph is used and the message says why.  Stored int8 weights with
float16 outlier rows get their arithmetic derived in memory at load (`inference.cpu_recipes`).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from desktop.domain.errors import ModelError
from inference import side_by_side
from inference.card import ModelCard, check_graph_inputs
from inference.evidence_choice import settings_for
from inference.formatting import Encoded
from inference.gpu_graph import GPU_LENGTH_BUCKET, derive_fp16, pad_to_bucket
from inference.graph_files import external_data_problem, stored_rows
from inference.providers import CPU_ORDER, GPU_ORDER, choose_provider, default_workers, ort, pool
from inference.unpadded import graph_is_unpadded, unpadded_logits


class Runner:
    """One ONNX Runtime session over the model graph that suits the device."""

    def __init__(self, directory: str | Path, card: ModelCard, device: str = "auto",
                 precision: str | None = None, threads: int | None = None, beside_window: bool = False):
        ort_ = ort()
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
        self.spin = spinning(beside_window)
        env_threads = os.environ.get("MCQLENS_THREADS")
        self.threads = int(threads or env_threads) if (threads or env_threads) else None
        providers = [provider] if provider == "CPUExecutionProvider" else [provider, "CPUExecutionProvider"]
        layout = ""
        self.recipe = None
        self.attention_layers: tuple[int, ...] = ()  # graph output of the reader's attention, for the evidence
        self.one_sequence = card.layout == "one-sequence"
        self.side_session = None  # single-threaded, for a call's questions side by side (inference.side_by_side)
        stored = not on_cuda and self.precision == "int8" and stored_rows(path)
        if on_cuda:
            self.session = self._session(ort_, path, providers, unpadded=False)
        elif stored:
            # int8 weights with float16 outlier rows: the arithmetic is chosen from the CPU's flags
            # and derived in memory at load (inference.cpu_recipes)
            from inference import cpu_recipes

            allowed = (card.extra.get("quantization") or {}).get("runtime") or list(cpu_recipes.RECIPES)
            self.recipe, why = cpu_recipes.choose(allowed)
            try:
                import onnx

                graph = cpu_recipes.derive(onnx.load(str(path)), self.recipe, inplace=True)
                self.attention_layers = _evidence_attention(card)
                if self.attention_layers and self.one_sequence:
                    from inference import option_attention

                    option_attention.add(graph, list(self.attention_layers))
            except Exception as exc:
                raise ModelError(f"{path}: cannot read the stored int8 weights ({_first_line(exc)})") from exc
            layout = f"{why}; {self.recipe} graph derived at load"
            intra = self.threads or default_workers() if self.one_sequence else 1
            model_bytes = graph.SerializeToString()
            del graph
            if self.one_sequence:  # a lone question on `intra` threads, a call's questions side by side
                self.session, self.side_session = side_by_side.sessions(
                    lambda n: self._session(ort_, path, providers, unpadded=True, model_bytes=model_bytes, intra=n),
                    intra)
            else:
                self.session = self._session(ort_, path, providers, unpadded=True, model_bytes=model_bytes,
                                             intra=intra)
        else:
            cpu_path, layout, unpadded = self._cpu_layout(path)
            try:
                self.session = self._session(ort_, cpu_path, providers, unpadded)
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
                    self.session = self._session(ort_, rebuilt, providers, unpadded)
                    path = rebuilt
                    layout = f"{layout} (the cached graph was damaged and is rebuilt)"
                except ModelError as exc2:
                    layout = f"CPU layout not used: {exc2}; the shipped graph runs as it is"
                    self.session = self._session(ort_, path, providers, unpadded=False)
        used = self.session.get_providers()[0]
        if provider == "CUDAExecutionProvider" and used != provider:
            reason = "CUDA provider present but no usable GPU answered; using the CPU instead"
        # --device cuda that ends on the CPU: the commands print this on a line of its own
        self.fallback = reason if device == "cuda" and used != "CUDAExecutionProvider" else None
        self.provider = used
        self.graph_file = path.name
        self.unpadded = graph_is_unpadded(self.session)
        self.workers = 1
        self.side_workers = 1
        if self.one_sequence and not self.on_gpu:
            spin = "threads spin" if self.spin else "threads sleep"
            threads = self.threads or default_workers()
            if self.side_session is None and not stored and self.unpadded and threads > 1:
                self.side_session = self.session  # a graph in the CPU layout: its session runs one thread already
            self.side_workers = threads if self.side_session is not None else 1
            side = (f"; a call's questions {self.side_workers} at a time, 1 thread each" if self.side_workers > 1
                    else "")
            layout = (f"{layout}; one sequence per question, {threads} threads "
                      f"({spin} between a run's operators){side}")
        elif self.unpadded and not self.on_gpu:
            self.workers = self.threads or default_workers()
            how = (f"unpadded sequences, {self.workers} concurrent runs of 1 thread" if self.workers > 1
                   else "unpadded sequences, 1 run at a time")
            layout = f"{layout}; {how}" if layout else how
        elif self.unpadded:
            layout = f"{layout}; unpadded sequences" if layout else "unpadded sequences"
        self.pool = pool(self.workers)
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
            if self.spin:
                # a run's worker threads spin between its operators (a one-sequence question is
                # ~450 small kernels: waking a sleeping thread for each cost the shortcut format
                # 14-18% and the standard 3-5% on the 2-core AMD, paired, docs/bench_runs/trials/
                # spin-within-run-20261128), and stop when the run ends (spinning on after a run
                # burnt ~50 ms of CPU each)
                opts.add_session_config_entry("session.intra_op.allow_spinning", "1")
                opts.add_session_config_entry("session.force_spinning_stop", "1")
            else:
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
                lengths = batch.lengths.tolist()
                feeds_of = batch.feeds(names)

                def run(session, b: int) -> list[np.ndarray]:  # this main session or the side one: CPU either way
                    n = lengths[b]
                    return session.run(["logits", *extra], {k: np.ascontiguousarray(v[[b], :n])
                                                            for k, v in feeds_of.items()})

                for b, got in enumerate(side_by_side.run_all(run, len(lengths), self.session, self.side_session,
                                                             self.side_workers)):
                    rows, n = [b], lengths[b]
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


def spinning(beside_window: bool = False) -> bool:
    """Whether a run's threads spin between its operators: MCQLENS_ORT_SPIN=1 or 0 says; else yes,
    unless the model works beside an open window (its panel).  There the window's thread waited
    for spinning ones: search and filter changes on all of RACE took 1,177 and 2,446 ms instead of
    16 and 40 (bench_gui, docs/bench_runs/trials/spin-within-run-20261128), and the panel's runs
    are mostly ahead of the reader anyway."""
    forced = os.environ.get("MCQLENS_ORT_SPIN")
    if forced in ("0", "1"):
        return forced == "1"
    return not beside_window


def _evidence_attention(card) -> tuple[int, ...]:
    """The layers whose attention the card's evidence settings weigh in (none: no extra output)."""
    st = settings_for(card)
    return tuple(st.attention_layers) if st.attention_weight > 0 else ()


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
