"""The runtime on the committed tiny model (no torch): probabilities, entropy, N, MI, errors."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import inference
from desktop.domain.errors import ModelError
from desktop.domain.model import Question

TINY = Path(__file__).parent / "data" / "tiny_model"
EXPMRC = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"


@pytest.fixture(scope="module")
def model():
    return inference.load_model(TINY, device="cpu")


@pytest.fixture(scope="module")
def expmrc():
    passages, questions = {}, []
    for n, p in enumerate(json.loads(EXPMRC.read_text(encoding="utf-8"))["data"]):
        pid = str(p.get("id", n))
        passages[pid] = p["article"]
        for j, (stem, opts) in enumerate(zip(p["questions"], p["options"])):
            questions.append(Question(id=f"{pid}-{j}", passage_id=pid, index=j, stem=stem,
                                      alternatives=list(opts), key="ABCD".index(p["answers"][j]), source="expmrc"))
    return passages, questions


@pytest.fixture(scope="module")
def scored(model, expmrc):
    passages, questions = expmrc
    return questions[:40], inference.score(model, questions[:40], passages, ["standard", "shortcut"])


def test_probabilities_entropy_and_effective_options_by_hand(scored):
    questions, results = scored
    assert [r.item_id for r in results] == [q.id for q in questions]
    for q, r in zip(questions, results):
        for fmt, f in r.formats.items():
            assert len(f.probabilities) == len(q.alternatives)
            assert math.isclose(sum(f.probabilities), 1.0, abs_tol=1e-9)
            # softmax(logits / T) by hand
            z = [x / f.temperature for x in f.logits]
            e = [math.exp(x - max(z)) for x in z]
            assert np.allclose(f.probabilities, [x / sum(e) for x in e], atol=1e-12)
            h = -sum(p * math.log2(p) for p in f.probabilities if p > 0)
            assert math.isclose(f.entropy_bits, h, abs_tol=1e-9)
            assert math.isclose(f.n_eff, 2 ** h, rel_tol=1e-9)
            assert 1.0 <= f.n_eff <= len(q.alternatives) + 1e-9
            assert f.predicted == max(range(len(q.alternatives)), key=lambda i: f.probabilities[i])
        # MI in bits: entropy without the passage minus entropy with it
        assert math.isclose(r.mi_bits, r.formats["shortcut"].entropy_bits - r.formats["standard"].entropy_bits,
                            abs_tol=1e-12)
    # the tiny model is not uniform: N varies and falls below the number of alternatives
    n_effs = [r.formats["shortcut"].n_eff for r in results]
    assert min(n_effs) < 3.9 and np.std(n_effs) > 0.01
    # MI is positive exactly when the passage made the model more certain (fewer effective options)
    for r in results:
        assert (r.mi_bits > 0) == (r.formats["standard"].n_eff < r.formats["shortcut"].n_eff)


def test_mi_absent_with_one_format_and_predictions_for_the_store(model, expmrc):
    passages, questions = expmrc
    (r,) = inference.score(model, questions[:1], passages, ["shortcut"])
    assert r.mi_bits is None
    (pred,) = r.predictions()
    assert pred.model_id == model.id == "tiny-bert-2x32" and pred.input_format == "shortcut"
    assert "mi_bits" not in pred.extra and pred.extra["n_eff"] == r.formats["shortcut"].n_eff


def test_batching_and_sorting_do_not_change_scores(model, expmrc, scored):
    passages, _ = expmrc
    questions, together = scored
    for q, r in list(zip(questions, together))[::9]:
        (alone,) = inference.score(model, [q], passages, ["standard", "shortcut"])
        for fmt in ("standard", "shortcut"):
            assert np.allclose(alone.formats[fmt].probabilities, r.formats[fmt].probabilities, atol=1e-5)


def test_two_to_five_alternatives(model, expmrc):
    passages, questions = expmrc
    four = [q for q in questions if len(q.alternatives) == 4][:4]
    variants = []
    for k, q in zip((2, 3, 4, 5), four):
        alts = q.alternatives[:k] if k <= 4 else q.alternatives + [four[0].alternatives[0]]
        variants.append(Question(id=f"{q.id}/{k}", passage_id=q.passage_id, index=q.index, stem=q.stem,
                                 alternatives=alts, key=0))
    results = inference.score(model, variants, passages, ["standard", "shortcut"])
    for k, r in zip((2, 3, 4, 5), results):
        for f in r.formats.values():
            assert len(f.probabilities) == k and math.isclose(sum(f.probabilities), 1.0, abs_tol=1e-9)
            assert 1.0 <= f.n_eff <= k + 1e-9


def test_progress_and_cancel(model, expmrc):
    passages, questions = expmrc
    seen = []
    inference.score(model, questions[:30], passages, ["shortcut"], progress=lambda d, t: seen.append((d, t)),
                    tokens_per_batch=2000)
    assert seen[-1] == (30, 30) and len(seen) > 1
    calls = iter([False, True])
    part = inference.score(model, questions[:30], passages, ["shortcut"], cancel=lambda: next(calls),
                           tokens_per_batch=2000)
    assert 0 < len(part) < 30 and all("shortcut" in r.formats for r in part)


def test_cuda_asked_for_and_absent_falls_back_to_cpu_with_a_message():
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this machine has the CUDA provider")
    m = inference.load_model(TINY, device="cuda")
    assert m.runner.provider == "CPUExecutionProvider"
    assert "CUDA was asked for" in m.message and "onnxruntime-gpu" in m.message
    with pytest.raises(ModelError, match="unknown device"):
        inference.load_model(TINY, device="tpu")


def test_missing_corrupt_or_mismatched_model_gives_clear_errors(tmp_path, model, expmrc):
    bad = tmp_path / "m"
    shutil.copytree(TINY, bad)
    graph = bad / "model.int8.onnx"
    graph.write_bytes(graph.read_bytes()[:5000])
    with pytest.raises(ModelError, match="corrupt"):
        inference.load_model(bad, device="cpu")
    graph.unlink()
    with pytest.raises(ModelError, match="missing"):
        inference.load_model(bad, device="cpu")
    shutil.copy(TINY / "model.int8.onnx", graph)
    card = json.loads((bad / "card.json").read_text())
    card["inputs"] = ["input_ids", "attention_mask"]
    (bad / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelError, match="differ from the card"):
        inference.load_model(bad, device="cpu")
    passages, questions = expmrc
    with pytest.raises(ModelError, match="not trained for the options format"):
        inference.score(model, questions[:1], passages, ["options"])
    with pytest.raises(ModelError, match="not a model directory"):
        inference.load_model(tmp_path, device="cpu")


def test_a_question_without_alternatives_is_skipped_not_fatal(model, expmrc):
    passages, questions = expmrc
    q = questions[0]
    empty = Question(id="empty", passage_id=q.passage_id, index=9, stem=q.stem, alternatives=[], key=None)
    seen = []
    results = inference.score(model, [empty, q], passages, ["shortcut"], progress=lambda d, t: seen.append((d, t)))
    assert results[0].formats == {} and results[0].predictions() == []
    assert len(results[1].formats["shortcut"].probabilities) == len(q.alternatives)
    assert seen[-1] == (2, 2)


def test_length_buckets_change_shapes_not_logits(expmrc, monkeypatch):
    """On a GPU the runner pads token lengths to multiples of 64 (ONNX Runtime's CUDA
    attention pays tens of ms per new length); the mask hides the padding, so the
    logits of real ExpMRC questions must not move.  Checked here on the padded graph."""
    from inference.gpu_graph import GPU_LENGTH_BUCKET, bucketed

    assert [bucketed(n, 64, 512) for n in (1, 64, 65, 440, 500, 512)] == [64, 64, 128, 448, 512, 512]
    assert bucketed(530, 64, 512) == 530 and bucketed(37, 1, 512) == 37
    monkeypatch.setenv("MCQLENS_CPU_LAYOUT", "0")  # keep the masked (padded) graph on the CPU
    m = inference.load_model(TINY, device="cpu")
    assert not m.runner.unpadded and m.runner.length_bucket == 1
    passages, questions = expmrc
    plain = inference.score(m, questions[:30], passages, ["standard", "shortcut"])
    seen = []

    class Recording:  # the session as the runner calls it, recording the shapes it is fed
        def __init__(self, session):
            self.session = session

        def run(self, names, feeds):
            seen.append(feeds["input_ids"].shape)
            return self.session.run(names, feeds)

    m.runner.session = Recording(m.runner.session)
    m.runner.length_bucket = GPU_LENGTH_BUCKET
    padded = inference.score(m, questions[:30], passages, ["standard", "shortcut"])
    assert seen and all(shape[2] % GPU_LENGTH_BUCKET == 0 for shape in seen)
    for a, b in zip(plain, padded):
        for fmt in a.formats:
            assert np.allclose(a.formats[fmt].logits, b.formats[fmt].logits, atol=1e-4)
            assert a.formats[fmt].predicted == b.formats[fmt].predicted
