"""Evidence-method settings chosen by cross-validation inside ExpMRC RACE+ dev, reported on held-out folds.

The idf-recall-options method has free choices (β, the short-sentence rule, the reader's
weight, IDF on or off: `models.evaluation.evidence.Settings`).  Choosing them on the whole dev set and
reporting on the same set flatters the method.  Here the passages are split into k folds
(by passage, so the questions of one passage never sit on both sides); for each fold the
setting with the best mean evidence F1 on the other folds is chosen and then scored on that
fold alone.  Every question is thus scored once, by a setting chosen without it, and the
pooled held-out figures are what the docs report.

    python -m models.evaluation.evidence_cv [--folds 5] [--model models/default] [-o OUT.json]

Answers (and the reader's probabilities the method weighs the alternatives with) come from
the model through `inference.score`.  Scoring is the official ExpMRC rules (`desktop.domain.expmrc_metric`):
evidence F1 is the max token F1 over the references; overall = answer × evidence per question.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

import inference
from desktop.domain import expmrc_metric
from desktop.formats import expmrc
from inference import formatting
from inference.evidence_occlusion import sentence_effects
from models.evaluation import evidence as E

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT.parent / "shared" / "data" / "expmrc" / "expmrc-race-dev.json"

GRID = {"beta": (1.0, 2.0, 3.0), "short_sentence": (0, 10), "reader_weight": (0.5, 1.0), "idf": (True,)}
# the reader's own sentence effects (inference.evidence_occlusion): their weight in the mix, and
# how many of the most similar sentences are re-scored (0: all)
OCCLUSION = {"occlusion_weight": (0.25, 0.5, 0.75, 1.0), "occlusion_top": (3, 5, 8)}


def grid(occlusion: bool = True) -> list[E.Settings]:
    keys = list(GRID)
    base = [E.Settings(**dict(zip(keys, vals))) for vals in itertools.product(*(GRID[k] for k in keys))]
    if not occlusion:
        return base
    extra = [E.Settings(**{**b.__dict__, "occlusion_weight": w, "occlusion_top": t})
             for b in base for w in OCCLUSION["occlusion_weight"] for t in OCCLUSION["occlusion_top"]]
    return base + extra


def fold_of(passage_id: str, k: int) -> int:
    """A stable fold by passage id (not file order)."""
    return int(hashlib.sha256(passage_id.encode("utf-8")).hexdigest(), 16) % k


def questions(dataset: dict) -> list[dict]:
    out = []
    for s in dataset["data"]:
        for j, stem in enumerate(s["questions"]):
            out.append({"id": f"{s['id']}-{j}", "pid": s["id"], "passage": s["article"], "stem": stem,
                        "alternatives": s["options"][j], "key": "ABCD".index(s["answers"][j]),
                        "references": s["evidences"][j]})
    return out


def per_question_f1(items: Sequence[dict], probs: dict[str, Sequence[float]], settings: E.Settings,
                    index_of, effects: dict | None = None) -> list[float]:
    """`index_of(passage)` → the `SentenceIndex` to score that passage's sentences with."""
    out = []
    for q in items:
        p = probs[q["id"]]
        index = index_of(q["passage"])
        found = None
        if settings.occlusion_weight > 0 and effects and q["id"] in effects:
            sims = E.similarity_scores(index, q["passage"], q["stem"], q["alternatives"], p, settings)
            chosen = E.occlusion_candidates(sims, settings)
            every = effects[q["id"]]
            found = {i: every[i] for i in chosen if i < len(every) and every[i] is not None}
        ev = E.idf_recall_options(index, q["passage"], q["stem"], q["alternatives"], p, settings, found)
        out.append(expmrc_metric.evidence_f1(ev.text if ev else "", q["references"]))
    return out


def cross_validate(dataset: dict, probs: dict[str, Sequence[float]], k: int = 5,
                   settings: Sequence[E.Settings] | None = None, effects: dict | None = None) -> dict:
    """Choose settings on k-1 folds, score the k-th; return pooled held-out F1s and each fold's choice."""
    settings = list(settings or grid(occlusion=bool(effects)))
    items = questions(dataset)
    # IDF over each item's own passage, as `inference.score` computes it for one item
    index = _index_of()
    # every setting's per-question F1 once; the folds only regroup them
    table = {st: per_question_f1(items, probs, st, index, effects) for st in settings}
    folds = [fold_of(q["pid"], k) for q in items]
    held_out_f1 = [0.0] * len(items)
    choices = []
    for f in range(k):
        train = [i for i, g in enumerate(folds) if g != f]
        test = [i for i, g in enumerate(folds) if g == f]
        best = max(settings, key=lambda st: (sum(table[st][i] for i in train) / max(len(train), 1), st == E.DEFAULT_SETTINGS))
        for i in test:
            held_out_f1[i] = table[best][i]
        choices.append({"fold": f, "questions": len(test), "passages": len({items[i]["pid"] for i in test}),
                        "settings": best.__dict__,
                        "train_evi_f1": 100 * sum(table[best][i] for i in train) / max(len(train), 1),
                        "held_out_evi_f1": 100 * sum(table[best][i] for i in test) / max(len(test), 1)})
    correct = [int(max(range(len(q["alternatives"])), key=lambda a: probs[q["id"]][a]) == q["key"]) for q in items]
    n = len(items)
    in_sample_best = max(settings, key=lambda st: sum(table[st]))
    return {
        "folds": k, "questions": n, "settings_tried": len(settings),
        "occlusion": any(st.occlusion_weight > 0 for st in settings),
        "held_out": {"EVI_F1": 100 * sum(held_out_f1) / n, "ANS_F1": 100 * sum(correct) / n,
                     "ALL_F1": 100 * sum(c * e for c, e in zip(correct, held_out_f1)) / n},
        "default_settings_on_all": 100 * sum(table[E.DEFAULT_SETTINGS]) / n if E.DEFAULT_SETTINGS in table else None,
        "best_in_sample": {"settings": in_sample_best.__dict__, "EVI_F1": 100 * sum(table[in_sample_best]) / n},
        "choices": choices,
    }


def _index_of():
    """A `SentenceIndex` per passage (IDF over that passage alone), as `inference.score` builds it."""
    cache: dict[str, E.SentenceIndex] = {}

    def of(passage: str) -> E.SentenceIndex:
        if passage not in cache:
            cache[passage] = E.SentenceIndex([passage])
        return cache[passage]
    return of


def model_effects(dataset: dict, probs: dict[str, Sequence[float]], model_dir: Path, cache: Path | None,
                  settings: Sequence[E.Settings] | None = None) -> dict:
    """{question id: the reader's logit drop per sentence (None where not asked)} through the
    product's own function (`inference.evidence_occlusion.sentence_effects`), cached in `cache`
    (JSON) between runs.  Only the sentences some setting of the grid re-scores are computed
    (the union of each setting's `occlusion_candidates`): on two CPU cores the reader takes
    about a third of a second per sentence, and most sentences of a passage are never a
    candidate."""
    settings = [st for st in (settings or grid()) if st.occlusion_weight > 0]
    got: dict = {}
    if cache and cache.is_file():
        got = {k: [s[2] for s in v["sentences"]] for k, v in json.loads(cache.read_text()).items()}
    index_of = _index_of()
    todo = [q for q in questions(dataset) if q["id"] not in got]
    if todo:
        model = inference.load_model(model_dir, device="cpu")
        for n, q in enumerate(todo, 1):
            index = index_of(q["passage"])
            sents = index.of(q["passage"])
            p = probs[q["id"]]
            wanted: set[int] = set()
            for st in settings:
                sims = E.similarity_scores(index, q["passage"], q["stem"], q["alternatives"], p, st)
                wanted.update(E.occlusion_candidates(sims, st))
            wanted_list = sorted(wanted)
            enc = formatting.encode_questions(model.tokenizer, [(q["passage"], q["stem"], q["alternatives"])],
                                              "standard", model.card.max_length)
            z = model.runner.logits(enc)[0]
            pred = int(max(range(len(q["alternatives"])), key=lambda a: z[a]))
            spans = [sents[j][:2] for j in wanted_list]
            drops = sentence_effects(model, q["passage"], q["stem"], q["alternatives"][pred], spans, float(z[pred]))
            every: list = [None] * len(sents)
            for j, d in zip(wanted_list, drops):
                every[j] = d
            got[q["id"]] = every
            if n % 20 == 0 or n == len(todo):
                print(f"  sentence effects: {n}/{len(todo)} questions", file=sys.stderr, flush=True)
                if cache:  # kept as it grows: a stopped run goes on from here
                    cache.write_text(json.dumps({k: {"sentences": [[0, 0, e] for e in v]} for k, v in got.items()}))
    return got


def model_probabilities(dataset_path: Path, model_dir: Path) -> dict[str, list[float]]:
    """The standard format's probabilities for every question."""
    ds = expmrc.read(dataset_path)
    passages = {p.id: p for p in ds.passages}
    qs = [q for p in ds.passages for q in p.questions]
    model = inference.load_model(model_dir, device="cpu")
    scores = inference.score(model, qs, passages, ["standard"], evidence=None)  # the answers alone
    return {q.id: list(s.formats["standard"].probabilities) for q, s in zip(qs, scores)}


# the reader's attention (`models.evaluation.evidence_signals`): which layers, summed or averaged over a
# sentence's tokens, and its share of the score; the reader's drop without the N most similar
# sentences (a pass each) and its share
ATTENTION_LAYERS = ((11,), (10,), (9,), (8,), (7,), (6,), (10, 11), (9, 10, 11), (8, 9, 10, 11),
                    (6, 7, 8, 9, 10, 11), tuple(range(12)))
ATTENTION = {"attention_pool": ("sum", "mean"), "attention_weight": (0.25, 0.5, 0.75)}
EFFECTS = {"occlusion_top": (1, 2, 3), "occlusion_weight": (0.25, 0.5)}


def signal_grid(layers: int) -> list[E.Settings]:
    keys = list(GRID)
    base = [E.Settings(**dict(zip(keys, vals))) for vals in itertools.product(*(GRID[k] for k in keys))]
    out = list(base)
    sets = [ls for ls in ATTENTION_LAYERS if max(ls) < layers] + [tuple(range(layers))]
    for b in base:
        for ls in dict.fromkeys(sets):
            for pool in ATTENTION["attention_pool"]:
                for w in ATTENTION["attention_weight"]:
                    out.append(E.Settings(**{**b.__dict__, "attention_layers": ls, "attention_pool": pool,
                                             "attention_weight": w}))
        for top in EFFECTS["occlusion_top"]:
            for w in EFFECTS["occlusion_weight"]:
                out.append(E.Settings(**{**b.__dict__, "occlusion_top": top, "occlusion_weight": w}))
    return out


def signal_table(items: Sequence[dict], signals: dict, settings: Sequence[E.Settings],
                 temperature: float = 1.0) -> dict:
    """Every setting's per-question evidence F1 from the reader's stored signals (the similarity
    computed once per question and (β, reader's weight), then blended as `inference.score` blends)."""
    index_of = _index_of()
    table = {st: [] for st in settings}
    for q in items:
        sig = signals[q["id"]]
        z = np.array(sig["logits"], dtype=np.float64) / temperature
        p = (np.exp(z - z.max()) / np.exp(z - z.max()).sum()).tolist()
        index = index_of(q["passage"])
        sents = index.of(q["passage"])
        sims: dict = {}
        f1s: dict = {}
        tokens = [max(1.0, t) for t in sig["tokens"]]
        for st in settings:
            key = (st.beta, st.reader_weight, st.idf)
            if key not in sims:
                sims[key] = E.similarity_scores(index, q["passage"], q["stem"], q["alternatives"], p, st)
            scores = sims[key]
            extra = []
            if st.attention_weight > 0:
                att = [sum(sig["attention"][l][i] for l in st.attention_layers) / len(st.attention_layers)
                       for i in range(len(sents))]
                if st.attention_pool == "mean":
                    att = [a / t for a, t in zip(att, tokens)]
                extra.append((att, st.attention_weight))
            if st.occlusion_weight > 0:
                chosen = set(sorted(range(len(sents)), key=lambda i: (-scores[i], i))[: st.occlusion_top])
                eff = [(e or 0.0) if i in chosen else 0.0 for i, e in enumerate(sig["effects"])]
                extra.append((eff, st.occlusion_weight))
            ev = E.choose_sentence(q["passage"], sents, E.blend(scores, extra) if extra else scores, st)
            if (ev.start, ev.end) not in f1s:
                f1s[(ev.start, ev.end)] = expmrc_metric.evidence_f1(ev.text, q["references"])
            table[st].append(f1s[(ev.start, ev.end)])
    return table


def cross_validate_signals(dataset: dict, signals: dict, k: int = 5, temperature: float = 1.0,
                           max_passes: int | None = None) -> dict:
    """`cross_validate` over similarity, attention and occlusion settings from stored signals;
    `max_passes`: settings re-scoring more sentences than this are not tried (the evidence's cost)."""
    items = [q for q in questions(dataset) if q["id"] in signals]
    layers = len(next(iter(signals.values()))["attention"])
    settings = [st for st in signal_grid(layers)
                if max_passes is None or st.occlusion_weight == 0 or st.occlusion_top <= max_passes]
    table = signal_table(items, signals, settings, temperature)
    probs = {q["id"]: signals[q["id"]]["logits"] for q in items}
    return _cross_validate_table(items, probs, settings, table, k)


def _cross_validate_table(items, probs, settings, table, k) -> dict:
    folds = [fold_of(q["pid"], k) for q in items]
    held = [0.0] * len(items)
    choices = []
    for f in range(k):
        train = [i for i, g in enumerate(folds) if g != f]
        test = [i for i, g in enumerate(folds) if g == f]
        best = max(settings, key=lambda st: (sum(table[st][i] for i in train) / max(len(train), 1),
                                             -st.occlusion_top * (st.occlusion_weight > 0)))
        for i in test:
            held[i] = table[best][i]
        choices.append({"fold": f, "questions": len(test), "settings": _plain(best),
                        "train_evi_f1": 100 * sum(table[best][i] for i in train) / max(len(train), 1),
                        "held_out_evi_f1": 100 * sum(table[best][i] for i in test) / max(len(test), 1)})
    correct = [int(max(range(len(q["alternatives"])), key=lambda a: probs[q["id"]][a]) == q["key"]) for q in items]
    n = len(items)
    in_sample = max(settings, key=lambda st: sum(table[st]))
    families = {}
    for name, keep in (("similarity", lambda st: st.attention_weight == 0 and st.occlusion_weight == 0),
                       ("attention", lambda st: st.attention_weight > 0),
                       ("occlusion", lambda st: st.occlusion_weight > 0)):
        sts = [st for st in settings if keep(st)]
        if sts:
            b = max(sts, key=lambda st: sum(table[st]))
            families[name] = {"best_in_sample": _plain(b), "EVI_F1": 100 * sum(table[b]) / n}
    return {"folds": k, "questions": n, "settings_tried": len(settings), "occlusion": True, "attention": True,
            "held_out": {"EVI_F1": 100 * sum(held) / n, "ANS_F1": 100 * sum(correct) / n,
                         "ALL_F1": 100 * sum(c * e for c, e in zip(correct, held)) / n},
            "best_in_sample": {"settings": _plain(in_sample), "EVI_F1": 100 * sum(table[in_sample]) / n},
            "families_in_sample": families, "choices": choices}


def _plain(st: E.Settings) -> dict:
    d = dict(st.__dict__)
    d["attention_layers"] = list(d.get("attention_layers") or ())
    return d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=DATASET)
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "default")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("-o", "--out", type=Path)
    ap.add_argument("--effects", type=Path, help="cache of the reader's sentence effects (JSON; computed when absent)")
    ap.add_argument("--no-occlusion", action="store_true", help="similarity settings only")
    ap.add_argument("--signals", type=Path, help="a one-sequence reader's signals (python -m models.evaluation.evidence_signals)")
    ap.add_argument("--temperature", type=float, default=1.0, help="the reader's standard-format temperature")
    ap.add_argument("--max-passes", type=int, default=None, help="most sentences a setting may re-score")
    args = ap.parse_args(argv)
    dataset = json.loads(args.dataset.read_text(encoding="utf-8"))
    if args.signals:
        result = cross_validate_signals(dataset, json.loads(args.signals.read_text()), args.folds, args.temperature,
                                        args.max_passes)
        text = json.dumps(result, indent=1)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        print(text)
        return 0
    probs = model_probabilities(args.dataset, args.model)
    effects = None if args.no_occlusion else model_effects(dataset, probs, args.model, args.effects)
    result = cross_validate(dataset, probs, args.folds, effects=effects)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())


def markdown(result: dict) -> str:
    """The paragraph docs/models.md prints for a cross-validation result."""
    h = result["held_out"]
    picks = {json.dumps(c["settings"], sort_keys=True) for c in result["choices"]}
    same = "the same settings in every fold" if len(picks) == 1 else f"{len(picks)} different settings across folds"
    return (f"Settings chosen by {result['folds']}-fold cross-validation inside RACE+ dev (`python -m models.evaluation.evidence_cv`; "
            f"folds by passage, {result['settings_tried']} settings of β, the short-sentence rule, the reader's weight "
            + ("and IDF, and of the weight and number of the reader's own sentence effects mixed in" if result.get("occlusion")
               else "and IDF") +
            f"): on the held-out folds, pooled over all {result['questions']} questions, idf-recall-options "
            f"reaches EVI_F1 {h['EVI_F1']:.1f}, ANS_F1 {h['ANS_F1']:.1f}, ALL_F1 {h['ALL_F1']:.1f}; the folds chose "
            f"{same}. Per fold (held-out EVI_F1): "
            + ", ".join(f"{c['held_out_evi_f1']:.1f}" for c in result["choices"]) + ".")
