"""The reader's own per-sentence signals on ExpMRC RACE+ dev, for choosing the evidence settings.

For a one-sequence model (`inference.one_sequence`), per question of the dataset:

* its standard-format logits (the answer the evidence is for);
* ``attention[layer]``: per passage sentence, how much the predicted alternative's tokens attend
  to it in that layer (`inference.option_attention`, every layer read in the same pass), summed
  over the sentence's tokens, and the sentence's token count (so the CV can try the mean too);
* ``effects``: the drop of the predicted alternative's log-probability without each of the
  `top` sentences most similar to the question (`inference.evidence_occlusion.sentence_effects_one`),
  the costly signal (one more pass per sentence).

Computed through the product's runtime (`inference.load_model`, its CPU recipe) and cached as
JSON that grows as it goes (a stopped run goes on from there).

    python -m models.evaluation.evidence_signals --model models/default -o signals.json [--top 3]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import inference
from inference import cpu_recipes
from inference import evidence_choice as E
from inference import formatting, one_sequence, option_attention
from inference.card import files_directory
from inference.evidence_occlusion import sentence_effects_one
from models.evaluation.evidence_cv import DATASET, questions

ROOT = Path(__file__).resolve().parents[2]


def study_runner(model):
    """The model's CPU graph with every layer's option attention as an output (`att<l>`)."""
    import onnx
    import onnxruntime as ort

    path = files_directory(model.directory, model.card) / model.card.files["int8"]
    graph = cpu_recipes.derive(onnx.load(str(path)), model.runner.recipe or "fp32")
    layers = sum(1 for n in graph.graph.node if n.op_type == "MultiHeadAttention")
    for layer in range(layers):
        option_attention.add(graph, [layer], output=f"att{layer}")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(graph.SerializeToString(), opts, providers=["CPUExecutionProvider"]), layers


def compute(dataset: dict, model_dir: Path, out: Path, top: int = 3) -> dict:
    got = json.loads(out.read_text()) if out.is_file() else {}
    model = inference.load_model(model_dir, device="cpu")
    if not model.one_sequence:
        raise SystemExit(f"{model_dir}: attention signals need a one-sequence model")
    sess, layers = study_runner(model)
    base = E.Settings(beta=1.0, short_sentence=10, reader_weight=1.0, idf=True)
    items = [q for q in questions(dataset) if q["id"] not in got]
    for n, q in enumerate(items, 1):
        seq, = one_sequence.tokenize(model.tokenizer, [(q["passage"], q["stem"], q["alternatives"])],
                                     formatting.STANDARD, model.card.max_length, offsets=True)
        batch = one_sequence.pad([seq], formatting.pad_id_of(model.tokenizer))
        outs = sess.run(["logits"] + [f"att{l}" for l in range(layers)], batch.feeds(model.runner.input_names))
        z = outs[0][0][: len(q["alternatives"])]
        pred = int(np.argmax(z))
        a, b = seq.passage_span
        index = E.SentenceIndex([q["passage"]])
        sents = index.of(q["passage"])
        attention = [E.sentence_attention(sents, seq.passage_offsets, outs[1 + l][0, pred, a:b].tolist(), "sum")
                     for l in range(layers)]
        counts = E.sentence_attention(sents, seq.passage_offsets, [1.0] * (b - a), "sum")
        probs = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        sims = E.similarity_scores(index, q["passage"], q["stem"], q["alternatives"], probs.tolist(), base)
        chosen = sorted(sorted(range(len(sents)), key=lambda i: (-sims[i], i))[:top])
        drops = sentence_effects_one(model, q["passage"], q["stem"], q["alternatives"], pred,
                                     [sents[i][:2] for i in chosen], z.tolist()) if top else []
        effects = [None] * len(sents)
        for i, d in zip(chosen, drops):
            effects[i] = d
        got[q["id"]] = {"logits": z.tolist(), "attention": attention, "tokens": counts, "effects": effects}
        if n % 25 == 0 or n == len(items):
            out.write_text(json.dumps(got))
            print(f"  signals: {n}/{len(items)}", file=sys.stderr, flush=True)
    out.write_text(json.dumps(got))
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.evaluation.evidence_signals", description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, default=DATASET)
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "default")
    ap.add_argument("--top", type=int, default=3, help="sentences re-scored without them (the most similar)")
    ap.add_argument("-o", "--out", type=Path, required=True)
    args = ap.parse_args(argv)
    compute(json.loads(args.dataset.read_text(encoding="utf-8")), args.model, args.out, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
