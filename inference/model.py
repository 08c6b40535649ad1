"""A loaded model directory: its card, tokenizer and ONNX Runtime session (`load_model`).

A card may hand a format to a part (`readers`: a model directory inside it, e.g. a 6-layer
student for the shortcut format): the part is loaded with the main graph (beside it on the
command line, after it beside a window) and scores that format; everything else (tokenizer,
truncation, temperature) stays the card's.
"""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from desktop.domain.errors import ModelError
from inference import formatting
from inference.card import ModelCard, files_directory, load_card


@dataclass
class Model:
    """A loaded model directory: card, tokenizer and one ONNX Runtime session."""

    directory: Path
    card: ModelCard
    tokenizer: Any
    runner: Any  # inference.session.Runner
    parts: dict[str, "Model"] = field(default_factory=dict)  # format → the part that reads it (card 'readers')

    def runner_for(self, fmt: str):
        """The runner that scores `fmt`: the part's where the card hands the format to one."""
        part = self.parts.get(fmt)
        return part.runner if part is not None else self.runner

    @property
    def id(self) -> str:
        return self.card.id

    @property
    def one_sequence(self) -> bool:
        """Whether the model reads a question in one sequence (`inference.one_sequence`)."""
        return self.card.layout == "one-sequence"

    @property
    def formats(self) -> list[str]:
        return list(self.card.formats)

    @property
    def message(self) -> str:
        """Which device and graph are used, and why (for the status line / log)."""
        text = self.runner.message
        for fmt, part in self.parts.items():
            text += f"; the {fmt} format read by {part.card.name} ({part.runner.message})"
        return text

    @property
    def fallback(self) -> str | None:
        """Why the GPU asked for (device="cuda") is not used, or None."""
        return getattr(self.runner, "fallback", None)


def load_model(directory: str | Path, device: str = "auto", precision: str | None = None,
               threads: int | None = None, beside_window: bool = False,
               cancel: Callable[[], bool] | None = None) -> Model:
    """Load a model directory; every problem is a ModelError naming the file.  `beside_window`: the
    model works for an open window (its panel), whose thread must not wait for it
    (`inference.session.spinning`)."""
    from inference.session import Runner

    directory = Path(directory)
    card = load_card(directory)
    tokenizer_file = files_directory(directory, card) / card.tokenizer
    try:
        tokenizer = formatting.load_tokenizer(tokenizer_file)
    except Exception as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ModelError(f"{tokenizer_file}: not a readable tokenizers file ({why})") from exc
    def main_graph():
        return Runner(directory, card, device=device, precision=precision, threads=threads,
                      beside_window=beside_window)

    def part(name: str) -> Model:
        return load_model(directory / name, device, precision, threads, beside_window)

    if not card.readers or beside_window:
        # beside a window the parts load after the main graph: two loads at once (each deriving its
        # graph in Python) starved the window's own thread, whose first paint took 1.4-2.1 s instead
        # of 0.6 s on the 2-core AMD (bench_gui)
        runner, parts = main_graph(), {}
        for fmt, name in card.readers.items():
            if cancel is not None and cancel():  # the window closed while the main graph loaded
                raise ModelError(f"{directory}: loading stopped before its {fmt} part ({directory / name})")
            parts[fmt] = part(name)
    else:
        # on the command line the parts load beside the main graph, which ends the load sooner
        with ThreadPoolExecutor(len(card.readers)) as ex:
            pending = {fmt: ex.submit(part, name) for fmt, name in card.readers.items()}
            runner = main_graph()
            parts = {fmt: job.result() for fmt, job in pending.items()}
    for fmt, part in parts.items():
        _check_part(directory, card, tokenizer_file, fmt, part)
    return Model(directory, card, tokenizer, runner, parts)


def _check_part(directory: Path, card: ModelCard, tokenizer_file: Path, fmt: str, part: Model) -> None:
    """A part reads its format on the card's terms: the same token ids, layout and temperature."""
    where = part.directory / "card.json"
    if part.card.readers:
        raise ModelError(f"{where}: a part (field 'readers' of {directory / 'card.json'}) cannot name parts itself")
    if fmt not in part.card.formats:
        raise ModelError(f"{where}: serves {', '.join(part.card.formats)}, not the {fmt} format "
                         f"{directory / 'card.json'} gives it")
    if part.card.layout != card.layout:
        raise ModelError(f"{where}: layout {part.card.layout!r} differs from {card.layout!r} of "
                         f"{directory / 'card.json'}")
    part_tokenizer = files_directory(part.directory, part.card) / part.card.tokenizer
    if _digest(part_tokenizer) != _digest(tokenizer_file):
        raise ModelError(f"{part_tokenizer}: differs from {tokenizer_file}; a part must read the same token ids")
    if fmt in part.card.temperature and abs(part.card.temperature_for(fmt) - card.temperature_for(fmt)) > 1e-9:
        raise ModelError(f"{where}: temperature {part.card.temperature_for(fmt)!r} for {fmt} differs from "
                         f"{card.temperature_for(fmt)!r} on {directory / 'card.json'}: the probabilities would "
                         f"depend on which card is read")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
