"""A loaded model directory: its card, tokenizer and ONNX Runtime session (`load_model`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
        return self.runner.message

    @property
    def fallback(self) -> str | None:
        """Why the GPU asked for (device="cuda") is not used, or None."""
        return getattr(self.runner, "fallback", None)


def load_model(directory: str | Path, device: str = "auto", precision: str | None = None,
               threads: int | None = None, beside_window: bool = False) -> Model:
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
    runner = Runner(directory, card, device=device, precision=precision, threads=threads,
                    beside_window=beside_window)
    return Model(directory, card, tokenizer, runner)
