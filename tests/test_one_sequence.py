"""The one-sequence layout, end to end on real RACE dev questions with the tiny one-sequence model
(tests/data/tiny_oneseq, written by `python -m models.export.tiny_one_sequence` through the shipped path):
encoding, the graph against PyTorch, the int8 storage with outlier rows, the CPU recipes, scoring,
the reader's option attention and the give-away words."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_oneseq"
RACE_DEV = ROOT.parent / "shared" / "data" / "race" / "dev" / "high"


def race_questions(n: int = 12):
    from desktop.domain.model import Question

    out, passages = [], {}
    for f in sorted(RACE_DEV.glob("*.txt"), key=lambda p: int(p.stem))[:n]:
        d = json.loads(f.read_text(encoding="utf-8"))
        pid = f"dev/high/{f.stem}"
        passages[pid] = d["article"]
        for j, (stem, opts, ans) in enumerate(zip(d["questions"], d["options"], d["answers"])):
            out.append(Question(id=f"{pid}-{j}", passage_id=pid, index=j, stem=stem, alternatives=list(opts),
                                key="ABCD".index(ans)))
    return out, passages


@pytest.fixture(scope="module")
def tok():
    from inference.formatting import load_tokenizer

    return load_tokenizer(TINY / "tokenizer.json")


@pytest.fixture(scope="module")
def model():
    import inference

    return inference.load_model(TINY, device="cpu")


def test_layout_reads_the_passage_once_and_numbers_each_alternative(tok):
    from inference.one_sequence import stem_text, tokenize

    qs, passages = race_questions(3)
    q = qs[0]
    seq, = tokenize(tok, [(passages[q.passage_id], q.stem, q.alternatives)], "standard", 512)
    assert len(seq.ids) <= 512 and seq.options == len(q.alternatives)
    a, b = seq.passage_span
    passage_ids = tok.encode(passages[q.passage_id], add_special_tokens=False).ids
    assert seq.ids[a:b] == passage_ids[: b - a]  # passage-first: cut at its end only
    for k, alt in enumerate(q.alternatives):
        own = [i for i, o in zip(seq.ids, seq.option_ids) if o == k + 1]
        assert own[:-1] == tok.encode(" ".join(alt.split()), add_special_tokens=False).ids  # then its separator
    stem_ids = tok.encode(stem_text(q.stem), add_special_tokens=False).ids
    assert seq.ids[b:].count(stem_ids[0]) >= 1 and all(o == 0 for o in seq.option_ids[:b])
    short, = tokenize(tok, [(passages[q.passage_id], q.stem, q.alternatives)], "shortcut", 512)
    assert short.passage_span[0] == short.passage_span[1] and len(short.ids) < len(seq.ids)


def test_cutting_an_encoded_question_equals_encoding_it_shorter(tok):
    from inference.one_sequence import tokenize

    qs, passages = race_questions(6)
    texts = [(passages[q.passage_id], q.stem, q.alternatives) for q in qs]
    long = tokenize(tok, texts, "standard", 512)
    short = tokenize(tok, texts, "standard", 384)
    for a, b in zip(long, short):
        cut = a.cut_to(384)
        assert cut.ids == b.ids and cut.option_ids == b.option_ids and cut.passage_span == b.passage_span


def test_permuted_alternatives_keep_their_tokens(tok):
    from inference.one_sequence import tokenize
    from models.training.one_sequence_data import permuted

    qs, passages = race_questions(2)
    q = qs[1]
    seq, = tokenize(tok, [(passages[q.passage_id], q.stem, q.alternatives)], "standard", 512)
    order = [2, 0, 3, 1]
    again, = tokenize(tok, [(passages[q.passage_id], q.stem, [q.alternatives[i] for i in order])], "standard", 512)
    moved = permuted(seq, order)
    assert moved.ids == again.ids and moved.option_ids == again.option_ids


def test_graph_computes_what_pytorch_computes():
    torch = pytest.importorskip("torch")
    import onnx
    import onnxruntime as ort

    from inference.formatting import load_tokenizer
    from inference.one_sequence import encode
    from models.export import mpnet_onnx
    from models.training.one_sequence_reader import mpnet_student

    state, cfg = mpnet_onnx.state_from_graph(onnx.load(str(TINY / "model.int8.onnx")))
    reader = mpnet_student(state, {**cfg, "pad_token_id": 1}).eval()
    graph = mpnet_onnx.build({k: v.detach().numpy() for k, v in reader.state_dict().items()}, cfg,
                             layout="one-sequence")
    sess = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    tok = load_tokenizer(TINY / "tokenizer.json")
    qs, passages = race_questions(4)
    for fmt in ("standard", "shortcut"):
        for q in qs[:5]:
            b = encode(tok, [(passages[q.passage_id], q.stem, q.alternatives)], fmt, 256)
            got = sess.run(["logits"], b.feeds(["input_ids", "attention_mask", "option_ids"]))[0]
            with torch.no_grad():
                want = reader(*(torch.from_numpy(x) for x in (b.input_ids, b.attention_mask, b.option_ids)),
                              len(q.alternatives)).numpy()
            assert np.abs(got - want).max() < 1e-4


def test_stored_rows_merge_back_to_the_dense_weights():
    import onnx
    from onnx import numpy_helper

    from inference.dequantize import dequantize_model
    from inference.int8_weights import rows_of

    stored = onnx.load(str(TINY / "model.int8.onnx"))
    rows = rows_of(stored)
    assert rows, "the tiny model keeps some outlier rows in float16"
    inits = {t.name: numpy_helper.to_array(t) for t in stored.graph.initializer}
    dense = dequantize_model(stored)
    d = {t.name: numpy_helper.to_array(t) for t in dense.graph.initializer}
    for w, idx in rows.items():
        q = inits[w + "_q"].astype(np.float32) * inits[w + "_scale"][None, :]
        assert np.all(q[idx, :] == 0)  # the int8 part holds zeros where the float rows are
        np.testing.assert_array_equal(d[w][idx, :], inits[w + "_rows"].astype(np.float32))
        keep = np.setdiff1d(np.arange(q.shape[0]), idx)
        np.testing.assert_allclose(d[w][keep, :], q[keep, :], rtol=0, atol=1e-7)
    assert not any(n.name.endswith("_rows_add") for n in dense.graph.node)


def test_cpu_recipes_and_their_choice(monkeypatch, tok):
    import onnx
    import onnxruntime as ort

    from inference import cpu_recipes
    from inference.one_sequence import encode

    assert cpu_recipes.choose(["fp32", "int8x2"], {"avx2", "avx512_vnni"})[0] == "int8x2"
    assert cpu_recipes.choose(["fp32", "int8", "int8x2"], {"amx_int8"})[0] == "int8"
    assert cpu_recipes.choose(["fp32", "int8x2"], {"avx2", "fma"})[0] == "fp32"
    assert cpu_recipes.choose(["fp32"], {"avx512_vnni"})[0] == "fp32"
    monkeypatch.setenv(cpu_recipes.ENV, "fp32")
    assert cpu_recipes.choose(["fp32", "int8x2"], {"avx512_vnni"}) == ("fp32", "MCQLENS_CPU_RECIPE=fp32")
    stored = onnx.load(str(TINY / "model.int8.onnx"))
    qs, passages = race_questions(3)
    feeds = [encode(tok, [(passages[q.passage_id], q.stem, q.alternatives)], "standard", 256)
             .feeds(["input_ids", "attention_mask", "option_ids"]) for q in qs]
    out = {}
    for recipe in cpu_recipes.RECIPES:
        s = ort.InferenceSession(cpu_recipes.derive(stored, recipe).SerializeToString(),
                                 providers=["CPUExecutionProvider"])
        out[recipe] = np.concatenate([s.run(["logits"], f)[0] for f in feeds])
    assert np.abs(out["int8"] - out["fp32"]).max() < 0.25 * np.abs(out["fp32"]).max()
    # the second pass carries what the first rounded away: the float model's logits to ~1e-3
    assert np.abs(out["int8x2"] - out["fp32"]).max() < 2e-3 * max(1.0, np.abs(out["fp32"]).max())
    assert np.abs(out["int8x2"] - out["fp32"]).max() < 0.1 * np.abs(out["int8"] - out["fp32"]).max()


def test_score_one_sequence_both_formats_with_evidence(model):
    import inference

    qs, passages = race_questions(4)
    assert model.one_sequence and "one sequence per question" in model.message
    assert ("int8" in model.message) or ("fp32" in model.message)
    scores = inference.score(model, qs, passages, ["standard", "shortcut"])
    assert len(scores) == len(qs)
    for s, q in zip(scores, qs):
        for fmt in ("standard", "shortcut"):
            p = s.formats[fmt].probabilities
            assert len(p) == len(q.alternatives) and abs(sum(p) - 1) < 1e-9
        assert s.mi_bits is not None
        ev = s.evidence
        assert ev is not None and passages[q.passage_id][ev.start:ev.end] == ev.text
    alone = inference.score(model, qs[3:4], passages, ["standard"], evidence=None)[0]
    np.testing.assert_allclose(alone.formats["standard"].logits, scores[3].formats["standard"].logits, atol=1e-5)


def test_a_question_scores_the_same_whatever_is_scored_with_it(model, tok):
    from inference.one_sequence import encode

    qs, passages = race_questions(3)
    texts = [(passages[q.passage_id], q.stem, q.alternatives) for q in qs[:6]]
    together = model.runner.logits_one(encode(tok, texts, "shortcut", 256))
    for i, t in enumerate(texts):
        one = model.runner.logits_one(encode(tok, [t], "shortcut", 256))[0]
        np.testing.assert_allclose(together[i, : len(one)], one, atol=1e-5)


def test_option_attention_is_the_layers_softmax_pooled_over_each_alternative(tok):
    torch = pytest.importorskip("torch")
    import onnx
    import onnxruntime as ort

    from inference import cpu_recipes, option_attention
    from inference.one_sequence import encode
    from models.export.mpnet_onnx import state_from_graph
    from models.training.one_sequence_reader import mpnet_student

    stored = onnx.load(str(TINY / "model.int8.onnx"))
    graph = option_attention.add(cpu_recipes.derive(stored, "fp32"), [0, 1])
    sess = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    qs, passages = race_questions(1)
    q = qs[0]
    b = encode(tok, [(passages[q.passage_id], q.stem, q.alternatives)], "standard", 128)
    _, att = sess.run(["logits", option_attention.OUTPUT], b.feeds(["input_ids", "attention_mask", "option_ids"]))
    np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-5)
    state, cfg = state_from_graph(stored)
    enc = mpnet_student(state, {**cfg, "pad_token_id": 1}).eval().encoder
    ids = torch.from_numpy(b.input_ids)
    t = ids.shape[1]
    with torch.no_grad():
        x, bias, acc = enc.embeddings(ids), enc.encoder.position_bias(t, "cpu"), 0
        for layer in enc.encoder.layer:
            a = layer.attention.attn
            qh = a.q(x).view(1, t, a.heads, a.head_size).transpose(1, 2)
            kh = a.k(x).view(1, t, a.heads, a.head_size).transpose(1, 2)
            acc = acc + torch.softmax(qh @ kh.transpose(-1, -2) / a.head_size ** 0.5 + bias, -1).mean(1)
            x = layer(x, bias)
        opt = torch.from_numpy(b.option_ids)[0]
        onehot = torch.stack([(opt == k + 1).float() for k in range(len(q.alternatives))])
        want = (onehot / onehot.sum(-1, keepdim=True)) @ (acc[0] / 2)
    np.testing.assert_allclose(att[0], want.numpy(), atol=1e-5)


def test_evidence_weighs_the_attention_the_card_asks_for(tmp_path, model):
    import shutil

    import inference
    from inference import evidence_choice as E

    card = json.loads((TINY / "card.json").read_text())
    card["evidence"] = {"beta": 1.0, "short_sentence": 10, "reader_weight": 1.0, "idf": True,
                        "attention_weight": 1.0, "attention_layers": [1], "attention_pool": "sum"}
    shutil.copytree(TINY, tmp_path / "m")
    (tmp_path / "m" / "card.json").write_text(json.dumps(card))
    m = inference.load_model(tmp_path / "m", device="cpu")
    assert m.runner.attention_layers == (1,)
    assert E.settings_for(m.card).attention_layers == (1,)
    qs, passages = race_questions(2)
    got = inference.score(m, qs, passages, ["standard"])
    for s, q in zip(got, qs):
        offsets, weights = s.passage_attention
        assert len(offsets) == len(weights) > 0
        text = passages[q.passage_id]
        sents = E.SentenceIndex([text]).of(text)
        per = E.sentence_attention(sents, offsets, weights)
        best = max(range(len(sents)), key=lambda i: (per[i], -i))  # attention alone decides
        assert s.evidence.start <= sents[best][0] and sents[best][1] <= s.evidence.end


def test_a_card_may_read_a_sibling_directorys_weights(tmp_path):
    import shutil

    import inference
    from desktop.domain.errors import ModelError

    shutil.copytree(TINY, tmp_path / "default")
    (tmp_path / "accurate").mkdir()
    card = json.loads((TINY / "card.json").read_text())
    card.update(id="tiny-accurate", name="tiny at 512", max_length=512, weights="../default")
    (tmp_path / "accurate" / "card.json").write_text(json.dumps(card))
    m = inference.load_model(tmp_path / "accurate", device="cpu")
    assert m.card.max_length == 512 and m.id == "tiny-accurate"
    card["weights"] = "../../etc"
    (tmp_path / "accurate" / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelError, match="weights"):
        inference.load_model(tmp_path / "accurate", device="cpu")


def test_giveaway_words_of_a_one_sequence_model(model):
    from inference.giveaway import explain

    qs, _ = race_questions(2)
    got = explain(model, qs[:3])
    assert len(got) == 3
    for e, q in zip(got, qs):
        assert abs(sum(e.probabilities) - 1) < 1e-9
        for w in e.words:
            text = q.stem if w.element == "stem" else q.alternatives["ABCD".index(w.element)]
            assert text[w.start:w.end] == w.word and np.isfinite(w.effect)


def test_runs_spin_only_where_no_window_waits(model, monkeypatch):
    """A model loaded for the command line spins between a run's operators; the window's panel
    loads its model beside the window (`desktop.app.model_scoring.load`), and its threads sleep
    there: the window's searches waited for spinning ones.  Either way the numbers are the same."""
    import inference
    from desktop.app import model_scoring

    monkeypatch.delenv("MCQLENS_ORT_SPIN", raising=False)
    assert model.runner.spin and "threads spin between a run's operators" in model.message
    quiet = model_scoring.load(TINY)
    assert not quiet.runner.spin and "threads sleep between a run's operators" in quiet.message
    qs, passages = race_questions(2)
    a = inference.score(model, qs, passages, ["standard", "shortcut"], evidence=None)
    b = inference.score(quiet, qs, passages, ["standard", "shortcut"], evidence=None)
    for x, y in zip(a, b):
        for fmt in ("standard", "shortcut"):
            np.testing.assert_allclose(x.formats[fmt].logits, y.formats[fmt].logits, atol=1e-6)
    monkeypatch.setenv("MCQLENS_ORT_SPIN", "0")
    assert not inference.load_model(TINY, device="cpu").runner.spin
    monkeypatch.setenv("MCQLENS_ORT_SPIN", "1")
    assert model_scoring.load(TINY).runner.spin


def test_a_calls_questions_run_side_by_side_with_their_own_numbers():
    """The questions of one call run side by side on a single-threaded session, one thread each
    (`inference.side_by_side`); each still runs alone, so its logits, and the reader's attention
    the evidence weighs, are bit for bit those the question gets by itself on both threads."""
    import inference
    from inference.one_sequence import encode
    from inference.option_attention import OUTPUT

    m = inference.load_model(TINY, device="cpu", threads=2)
    r = m.runner
    assert r.side_workers == 2 and r.side_session is not None and r.side_session is not r.session
    assert "a call's questions 2 at a time, 1 thread each" in m.message

    class Counted:  # which session the runs went to
        def __init__(self, session):
            self.session, self.runs = session, 0

        def run(self, outputs, feeds):
            self.runs += 1
            return self.session.run(outputs, feeds)

    r.side_session = Counted(r.side_session)
    qs, passages = race_questions(4)
    items = [(passages[q.passage_id], q.stem, q.alternatives) for q in qs]
    for fmt in ("standard", "shortcut"):
        extra = (OUTPUT,) if fmt == "standard" and r.attention_layers else ()
        before = r.side_session.runs
        together = r.logits_one(encode(m.tokenizer, items, fmt, m.card.max_length), extra)
        assert r.side_session.runs - before == len(items)  # every question of the call, side by side
        for b, item in enumerate(items):
            alone = r.logits_one(encode(m.tokenizer, [item], fmt, m.card.max_length), extra)
            if extra:
                (z, more), (z1, more1) = together, alone
                n = more1[OUTPUT].shape[-1]
                assert np.array_equal(more[OUTPUT][b, :, :n], more1[OUTPUT][0])
            else:
                z, z1 = together, alone
            assert np.array_equal(z[b][np.isfinite(z[b])], z1[0][np.isfinite(z1[0])])
        assert r.side_session.runs - before == len(items)  # a lone question ran on both threads
    one = inference.load_model(TINY, device="cpu", threads=1)
    assert one.runner.side_session is None and "at a time" not in one.message


def test_no_second_session_where_it_is_switched_off(monkeypatch):
    import inference

    monkeypatch.setenv("MCQLENS_SIDE_BY_SIDE", "0")
    m = inference.load_model(TINY, device="cpu", threads=2)
    assert m.runner.side_session is None and m.runner.side_workers == 1 and "at a time" not in m.message
    qs, passages = race_questions(2)
    assert len(inference.score(m, qs, passages, ["shortcut"], evidence=None)) == len(qs)


def test_runs_side_by_side_take_the_callers_priority():
    """The window's model thread runs below the window (nice 10, `desktop.ui.model.thread_priority`);
    the runs it hands to the shared pool must too, or two cores' worth of scoring ahead would take
    the CPU from the window's searches."""
    import os
    import sys
    import threading

    from inference import side_by_side

    if not sys.platform.startswith("linux"):
        pytest.skip("a thread's own nice value is Linux's")
    seen = []

    def run(session, i):
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return i

    def caller():
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        out.extend(side_by_side.run_all(run, 6, "single", "side", 3))  # a pool of its own size

    out: list = []
    t = threading.Thread(target=caller)
    t.start()
    t.join()
    assert out == list(range(6)) and seen and set(seen) == {19}
