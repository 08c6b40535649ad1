"""`score`: probabilities, N, MI and the model's evidence for questions in the given formats.

The one scoring path (`mcqlens score`, the window's model panel and what-if tab, `mcqlens
expmrc predict`, `mcqlens nota eval`); `QuestionScores.predictions()` is what each of them
stores.  Batches come from `inference.batching`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from desktop.domain.errors import ModelError
from desktop.domain.model import Prediction
from inference import evidence_choice, formatting, metrics
from inference.batching import (DEFAULT_TOKENS_PER_BATCH, GPU_TOKENS_PER_BATCH, UNPADDED_TOKENS_PER_BATCH,
                                length_batches, logits_once)
from inference.model import Model
from inference.gpu_graph import bucketed

# The evidence sentence is looked for in the passage's first 100,000 characters (about 40
# RACE passages; ExpMRC's longest is far shorter): idf-recall-options scores every sentence
# against every alternative in pure Python, 30 s for a 2 MB passage, and the reader itself
# reads at most its first 512 tokens.
EVIDENCE_MAX_CHARS = 100_000


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
    # (token offsets, weights) of the reader's attention from its predicted alternative to the
    # passage's tokens (a one-sequence model whose evidence weighs it in); not stored
    passage_attention: Any = field(default=None, repr=False)

    @property
    def mi_bits(self) -> float | None:
        """H(shortcut) − H(standard) when both were scored, else None."""
        s, c = self.formats.get(formatting.SHORTCUT), self.formats.get(formatting.STANDARD)
        if s is None or c is None:
            return None
        return s.entropy_bits - c.entropy_bits

    def predictions(self) -> list:
        """Domain `Prediction`s, one per format, ready for `store.add_predictions`."""
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
    settings = evidence_choice.settings_for(model.card) if model is not None else evidence_choice.DEFAULT_SETTINGS
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
            from inference.evidence_occlusion import sentence_effects, sentence_effects_one

            index = evidence_choice.SentenceIndex([text])
            sims = evidence_choice.similarity_scores(index, text, q.stem, q.alternatives, std.probabilities, settings)
            chosen = evidence_choice.occlusion_candidates(sims, settings)
            spans = [index.of(text)[j][:2] for j in chosen]
            if getattr(model, "one_sequence", False):
                got = sentence_effects_one(model, text, q.stem, q.alternatives, std.predicted, spans, std.logits)
            else:
                got = sentence_effects(model, text, q.stem, q.alternatives[std.predicted], spans,
                                       std.logits[std.predicted])
            effects = dict(zip(chosen, got))
        attention = None
        if r.passage_attention is not None and settings.attention_weight > 0:
            offsets, weights = r.passage_attention
            attention = evidence_choice.sentence_attention(evidence_choice.SentenceIndex([text]).of(text), offsets,
                                                           weights, settings.attention_pool)
        r.evidence = evidence_choice.predict(method, text, q.stem, q.alternatives, std.predicted, std.probabilities,
                                             settings=settings, effects=effects, attention=attention)


def _score_one_sequence(model, questions, passages, formats, results, complete, done, total, tokens_per_batch,
                        progress, cancel) -> int:
    """`score`'s loop for a one-sequence model (`inference.one_sequence`): each question is one
    sequence per format, batched by length.  Returns the count done, or −1 when cancelled."""
    from inference import one_sequence

    n = len(questions)
    pad_id = formatting.pad_id_of(model.tokenizer)
    for fmt in formats:
        temperature = model.card.temperature_for(fmt)
        runner = model.runner_for(fmt)
        todo = [i for i in range(n) if questions[i].alternatives]
        seqs = dict(zip(todo, one_sequence.tokenize(
            model.tokenizer, [(_passage_text(passages, questions[i], i), questions[i].stem, questions[i].alternatives)
                              for i in todo], fmt, model.card.max_length,
            offsets=bool(getattr(runner, "attention_layers", ())))))
        scored = np.zeros(n, dtype=bool)
        scored[[i for i in range(n) if i not in seqs]] = True
        done += n - len(seqs)
        order = sorted(seqs, key=lambda i: len(seqs[i].ids))
        batch: list[int] = []
        for k, i in enumerate(order):
            batch.append(i)
            if k + 1 < len(order) and (len(batch) + 1) * len(seqs[order[k + 1]].ids) <= tokens_per_batch:
                continue
            if cancel is not None and cancel():
                complete &= scored
                return -1
            padded = one_sequence.pad([seqs[j] for j in batch], pad_id)
            attention = None
            if fmt == formatting.STANDARD and getattr(runner, "attention_layers", ()):
                from inference.option_attention import OUTPUT

                logits, extra = runner.logits_one(padded, (OUTPUT,))
                attention = extra[OUTPUT]
            else:
                logits = runner.logits_one(padded)
            for b, (j, row, (p, pred, h, neff)) in enumerate(zip(batch, logits, scores_from_logits(logits, temperature))):
                results[j].formats[fmt] = FormatScores(fmt, p, pred, h, neff,
                                                       [float(x) for x in row[np.isfinite(row)]], temperature)
                if attention is not None:  # where the predicted alternative looked in the passage
                    a, e = seqs[j].passage_span
                    results[j].passage_attention = (seqs[j].passage_offsets or [], attention[b, pred, a:e].tolist())
                scored[j] = True
            done += len(batch)
            batch = []
            if progress is not None:
                progress(done, total)
    return done


def add_evidence(model: Model, results: Sequence[QuestionScores], questions: Sequence, passages=None,
                 method: str | None = evidence_choice.DEFAULT_METHOD) -> list[QuestionScores]:
    """The model's evidence for results `score(..., evidence=None)` already gave: the second
    stage of the window's two (probabilities first, the evidence after).

    `results`, `questions` and `passages` are aligned as `score` takes them; a result with
    the standard format and a passage gets `.evidence`, exactly what `score` with `method`
    would have given it, so `predictions()` then returns the rows `score` would have.
    Results that have their evidence already are left as they are.  Returns `results`."""
    _add_evidence(results, questions, passages, method, model)
    return list(results)


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
    if getattr(model, "one_sequence", False):
        done = _score_one_sequence(model, questions, passages, formats, results, complete, done, total,
                                   tokens_per_batch, progress, cancel)
        if done < 0:  # cancelled
            _add_evidence(results, questions, passages, evidence, model)
            return [r for r, ok in zip(results, complete) if ok]
        _add_evidence(results, questions, passages, evidence, model)
        return results
    for fmt in formats:
        temperature = model.card.temperature_for(fmt)
        runner = model.runner_for(fmt)
        texts = [formatting.encoder_texts(_passage_text(passages, questions[i], i), questions[i].stem,
                                          questions[i].alternatives, fmt, nota_index=nota[i]) for i in range(n)]
        seqs: list[list] = [[] for _ in range(n)]
        if texts:
            for i, row in enumerate(formatting.tokenize_items(model.tokenizer, texts, model.card.max_length)):
                seqs[i] = row
        # the widths the runner will see (on a GPU, lengths padded to buckets): batches of
        # one bucket then share one shape, and ONNX Runtime meets few new shapes
        bucket = getattr(runner, "length_bucket", 1)
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
            if getattr(runner, "unpadded", False):
                logits = logits_once(runner, enc, [seqs[i] for i in batch], seen)
            else:
                logits = runner.logits(enc)
            for i, row, (p, pred, h, neff) in zip(batch, logits, scores_from_logits(logits, temperature)):
                results[i].formats[fmt] = FormatScores(
                    fmt, p, pred, h, neff, [float(x) for x in row[np.isfinite(row)]], temperature)
                scored[i] = True
            done += len(batch)
            if progress is not None:
                progress(done, total)
    _add_evidence(results, questions, passages, evidence, model)
    return results
