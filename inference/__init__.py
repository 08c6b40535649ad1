"""Model probabilities for MCQ items with ONNX Runtime (GPU or CPU).

    model = load_model("models/default")            # ModelError when missing/corrupt
    scores = score(model, questions, passages, ["standard", "shortcut"])
    scores[0].formats["shortcut"].n_eff, scores[0].mi_bits, scores[0].evidence
    store.add_predictions([(s.item_id, p) for s in scores for p in s.predictions()])

Per question and input format: the probabilities over the alternatives after the
format's temperature, the predicted alternative, the entropy in bits, the effective
number of options N = 2^H, and — when both standard and shortcut are scored — the
contextual mutual information I = H(shortcut) − H(standard) (World Knowledge seed);
and, with the standard format and a passage, the model's evidence sentence
(`inference.evidence_choice`).  `score` is the one scoring path: `mcqlens score`, the
window's model panel and what-if tab, `mcqlens expmrc predict` and `mcqlens nota eval`
all call it, and `QuestionScores.predictions()` is what every one of them stores.

Only onnxruntime, tokenizers, numpy and onnx are needed (never torch or Qt); onnxruntime
is imported when a model is loaded, not when this package is.  onnx rewrites a graph into
its CPU layout at load (`inference.cpu_graph`); without it the shipped graph runs as it is.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from desktop.domain.errors import ModelError
from inference import evidence_choice, formatting, metrics
from inference.card import ModelCard, load_card
from inference.session import bucketed

# B × O × T per batch on CPU for a padded graph (one that keeps its attention mask).  Small
# batches are faster there, not slower: a batch's attention scores (sequences × heads × T²)
# must stay in the CPU's caches.  Measured on 40 ExpMRC questions, standard format,
# MiniLM-L6 int8, 2 cores: 2,048 → 6.6 s, 16,384 → 8.0 s, 65,536 → 14.0 s.  A question is
# never split, so one wide question still forms a batch.
DEFAULT_TOKENS_PER_BATCH = 2048
# A graph in the CPU layout (`inference.cpu_graph`) runs every sequence on its own anyway,
# so the batch only sets how many sequences the worker threads share out: one NOTA
# question (4 alternatives + the NOTA text) leaves one of 2 workers idle for its last
# sequence, several questions at once keep both busy.  Default model, first 61 ExpMRC
# questions, alternatives + NOTA text: 2,048 → 16.2 s, 8,192 → 13.2 s, 16,384 → 13.5 s
# (load average ~1).
UNPADDED_TOKENS_PER_BATCH = 8192
GPU_TOKENS_PER_BATCH = 1 << 18  # a GPU needs large batches to be busy
# The evidence sentence is looked for in the passage's first 100,000 characters (about 40
# RACE passages; ExpMRC's longest is far shorter): idf-recall-options scores every sentence
# against every alternative in pure Python, 30 s for a 2 MB passage, and the reader itself
# reads at most its first 512 tokens.
EVIDENCE_MAX_CHARS = 100_000


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
               threads: int | None = None) -> Model:
    """Load a model directory; every problem is a ModelError naming the file."""
    from inference.session import Runner

    directory = Path(directory)
    card = load_card(directory)
    try:
        tokenizer = formatting.load_tokenizer(directory / card.tokenizer)
    except Exception as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ModelError(f"{directory / card.tokenizer}: not a readable tokenizers file ({why})") from exc
    runner = Runner(directory, card, device=device, precision=precision, threads=threads)
    return Model(directory, card, tokenizer, runner)


@dataclass
class FormatScores:
    format: str
    probabilities: list[float]
    predicted: int
    entropy_bits: float
    n_eff: float
    logits: list[float]
    temperature: float


@dataclass
class QuestionScores:
    item_id: str
    model_id: str
    formats: dict[str, FormatScores] = field(default_factory=dict)
    evidence: Any = None  # inference.evidence_choice.EvidenceChoice (standard format, with a passage)
    model_name: str = ""

    @property
    def mi_bits(self) -> float | None:
        """H(shortcut) − H(standard) when both were scored, else None."""
        s, c = self.formats.get(formatting.SHORTCUT), self.formats.get(formatting.STANDARD)
        if s is None or c is None:
            return None
        return s.entropy_bits - c.entropy_bits

    def predictions(self) -> list:
        """Domain `Prediction`s, one per format, ready for `store.add_predictions`."""
        from desktop.domain.model import Prediction

        mi = self.mi_bits
        out = []
        for fmt, f in self.formats.items():
            extra = {"predicted": f.predicted, "entropy_bits": f.entropy_bits, "n_eff": f.n_eff,
                     "logits": f.logits, "temperature": f.temperature}
            if self.model_name:
                extra["model_name"] = self.model_name
            if mi is not None:
                extra["mi_bits"] = mi
            text = None
            ev = self.evidence
            if ev is not None and fmt == formatting.STANDARD:
                # the evidence goes with the standard row: it is chosen from the passage
                text = ev.text
                extra.update({"evidence_start": ev.start, "evidence_end": ev.end,
                              "evidence_method": ev.method, "evidence_score": ev.score})
            out.append(Prediction(model_id=self.model_id, input_format=fmt,
                                  probabilities=list(f.probabilities), extra=extra, evidence=text))
        return out


def _passage_text(passages, question, i: int) -> str:
    if passages is None:
        return ""
    if isinstance(passages, Mapping):
        p = passages.get(question.passage_id, "")
    else:
        p = passages[i]
    return p if isinstance(p, str) else p.text


def scores_from_logits(logits: np.ndarray, temperature: float) -> list[tuple[list[float], int, float, float]]:
    """(probabilities, predicted, H bits, N) per row; −inf logits are padding and dropped."""
    out = []
    probs = metrics.softmax(logits, temperature)
    for row_l, row_p in zip(logits, probs):
        keep = np.isfinite(row_l)
        p = row_p[keep]
        h = float(metrics.entropy_bits(p))
        out.append(([float(x) for x in p], int(np.argmax(p)), h, float(2.0 ** h)))
    return out


def _add_evidence(results: Sequence[QuestionScores], questions: Sequence, passages, method: str | None,
                  model: "Model | None" = None) -> None:
    """The model's evidence for every result scored in the standard format with a passage.

    With the default settings' `occlusion_weight` above 0 the reader's own sentence effects
    (`inference.evidence_occlusion`) are mixed in: each sentence taken out, the predicted
    alternative scored again."""
    if method is None:
        return
    settings = evidence_choice.DEFAULT_SETTINGS
    for i, r in enumerate(results):
        std = r.formats.get(formatting.STANDARD)
        if std is None or r.evidence is not None:
            continue
        text = _passage_text(passages, questions[i], i)[:EVIDENCE_MAX_CHARS]
        if not text:
            continue
        q = questions[i]
        effects = None
        if model is not None and method == evidence_choice.IDF_RECALL and settings.occlusion_weight > 0:
            from inference.evidence_occlusion import sentence_effects

            index = evidence_choice.SentenceIndex([text])
            sims = evidence_choice.similarity_scores(index, text, q.stem, q.alternatives, std.probabilities, settings)
            chosen = evidence_choice.occlusion_candidates(sims, settings)
            spans = [index.of(text)[j][:2] for j in chosen]
            effects = dict(zip(chosen, sentence_effects(model, text, q.stem, q.alternatives[std.predicted], spans,
                                                        std.logits[std.predicted])))
        r.evidence = evidence_choice.predict(method, text, q.stem, q.alternatives, std.predicted, std.probabilities,
                                             effects=effects)


def _sequence_key(ids: Sequence[int], types: Sequence[int]) -> bytes:
    """A 16-byte digest of one encoder input (token ids and token types)."""
    data = np.asarray(ids, dtype=np.int32).tobytes() + np.asarray(types, dtype=np.int8).tobytes()
    return hashlib.blake2b(data, digest_size=16).digest()


def _logits_once(runner, enc: formatting.Encoded, rows: Sequence[Sequence[tuple]], seen: dict) -> np.ndarray:
    """`runner.logits(enc)`, but a token sequence already encoded in this call (`seen`) or
    repeated in this batch is not run again: its logit is copied.  Exact: a runner that
    feeds unpadded sequences computes each one on its own.  In the NOTA grid, the NOTA
    text of every cloze question of a passage is the same sequence (passage + NOTA text):
    188 of the 2,782 sequences of ExpMRC dev, 6% of the encoder's work."""
    run_mask = enc.option_mask.copy()
    first: dict[bytes, tuple[int, int]] = {}
    copies = []
    for b, row in enumerate(rows):
        for o, (ids, types) in enumerate(row):
            key = _sequence_key(ids, types)
            if key in seen or key in first:
                run_mask[b, o] = False
                copies.append((b, o, key))
            else:
                first[key] = (b, o)
    if not copies:
        logits = runner.logits(enc)
    else:
        logits = runner.logits(dataclasses.replace(enc, option_mask=run_mask))
    for key, (b, o) in first.items():
        seen[key] = logits[b, o]
    for b, o, key in copies:
        logits[b, o] = seen[key]
    return logits


def length_batches(order: Sequence[int], n_options: Sequence[int], width: Sequence[int],
                   tokens_per_batch: int) -> list[list[int]]:
    """Consecutive runs of `order` (questions sorted by width) whose padded size —
    questions × widest option count × widest sequence — stays within the token budget;
    a question wider than the budget forms a batch of its own."""
    batches, start = [], 0
    while start < len(order):
        end, n_opt = start + 1, n_options[order[start]]
        while end < len(order) and (end + 1 - start) * max(n_opt, n_options[order[end]]) * width[order[end]] \
                <= tokens_per_batch:
            n_opt = max(n_opt, n_options[order[end]])
            end += 1
        batches.append(list(order[start:end]))
        start = end
    return batches


def score(model: Model, questions: Sequence, passages=None, formats: Sequence[str] | None = None,
          progress: Callable[[int, int], None] | None = None, cancel: Callable[[], bool] | None = None,
          tokens_per_batch: int | None = None, item_ids: Sequence[str] | None = None,
          nota_indices: Sequence[int | None] | None = None,
          evidence: str | None = evidence_choice.DEFAULT_METHOD) -> list[QuestionScores]:
    """Score questions (domain `Question`s) in the given formats (default: the card's).

    `passages`: {passage_id: Passage or text}, or a list aligned with `questions`.
    `progress(done, total)` is called after each batch (total = questions × formats);
    when `cancel()` turns true, scoring stops and the questions completed in every
    format so far are returned.  Batches are sorted by length so that little padding
    is computed.  With a runner that feeds unpadded sequences (the CPU layout), a token
    sequence that occurs again in the call is encoded once.

    `evidence`: the method (`inference.evidence_choice.METHODS`) that picks the model's
    evidence sentence for questions scored in the standard format with a passage; None
    for no evidence (the NOTA grid needs logits only).
    """
    formats = list(formats or model.card.formats)
    if tokens_per_batch is None:
        if model.runner.on_gpu:
            tokens_per_batch = GPU_TOKENS_PER_BATCH
        elif getattr(model.runner, "unpadded", False):
            tokens_per_batch = UNPADDED_TOKENS_PER_BATCH
        else:
            tokens_per_batch = DEFAULT_TOKENS_PER_BATCH
    for fmt in formats:
        formatting.check_format(fmt)
        if fmt not in model.card.formats:
            raise ModelError(f"model {model.id} was not trained for the {fmt} format "
                             f"(it serves {', '.join(model.card.formats)})")
    n = len(questions)
    ids = list(item_ids) if item_ids is not None else [q.id for q in questions]
    results = [QuestionScores(ids[i], model.id, model_name=model.card.name) for i in range(n)]
    total, done = n * len(formats), 0
    pad_id = formatting.pad_id_of(model.tokenizer)
    nota = list(nota_indices) if nota_indices is not None else [None] * n
    complete = np.ones(n, dtype=bool)
    for fmt in formats:
        temperature = model.card.temperature_for(fmt)
        texts = [formatting.encoder_texts(_passage_text(passages, questions[i], i), questions[i].stem,
                                          questions[i].alternatives, fmt, nota_index=nota[i]) for i in range(n)]
        seqs: list[list] = [[] for _ in range(n)]
        if texts:
            for i, row in enumerate(formatting.tokenize_items(model.tokenizer, texts, model.card.max_length)):
                seqs[i] = row
        # the widths the runner will see (on a GPU, lengths padded to buckets): batches of
        # one bucket then share one shape, and ONNX Runtime meets few new shapes
        bucket = getattr(model.runner, "length_bucket", 1)
        width = [bucketed(max((len(ids_) for ids_, _ in row), default=0), bucket, model.card.max_length)
                 for row in seqs]
        # nothing to encode: without alternatives (no result)
        order = sorted((i for i in range(n) if seqs[i]), key=lambda i: width[i])
        scored = np.zeros(n, dtype=bool)
        seen: dict[bytes, float] = {}  # logit of every token sequence encoded so far in this format
        empty = [i for i in range(n) if not seqs[i]]
        scored[empty] = True
        done += len(empty)
        for batch in length_batches(order, [len(row) for row in seqs], width, tokens_per_batch):
            if cancel is not None and cancel():
                complete &= scored
                _add_evidence(results, questions, passages, evidence, model)
                return [r for r, ok in zip(results, complete) if ok]
            enc = formatting.pad([seqs[i] for i in batch], pad_id)
            if getattr(model.runner, "unpadded", False):
                logits = _logits_once(model.runner, enc, [seqs[i] for i in batch], seen)
            else:
                logits = model.runner.logits(enc)
            for i, row, (p, pred, h, neff) in zip(batch, logits, scores_from_logits(logits, temperature)):
                results[i].formats[fmt] = FormatScores(
                    fmt, p, pred, h, neff, [float(x) for x in row[np.isfinite(row)]], temperature)
                scored[i] = True
            done += len(batch)
            if progress is not None:
                progress(done, total)
    _add_evidence(results, questions, passages, evidence, model)
    return results


__all__ = ["Model", "FormatScores", "QuestionScores", "load_model", "score", "evidence_choice", "scores_from_logits", "length_batches",
           "ModelError", "metrics", "formatting"]
