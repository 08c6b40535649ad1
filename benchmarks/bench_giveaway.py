"""Give-away words (issue 23): are they faithful to the shortcut model, and what do they cost?

On the RACE test questions that the model's shortcut format (Q+{O}, no passage) answers with
N < 2 (N = 2^H, H the entropy in bits), `inference.giveaway.explain` ranks the words of the stem
and the alternatives by occlusion.  Faithfulness by ERASER's measures (DeYoung et al. 2020), the
probability p of the alternative predicted on the intact item:

* comprehensiveness at k: p(intact) − p(top-k words deleted); high = the words mattered;
* the same for k random words of the same elements (as many from the stem and from each
  alternative as the top-k took), averaged over `--draws` draws: the baseline;
* sufficiency at k: p(intact) − p(only the top-k words kept); low = the words suffice
  (beside it, the same for k random words kept).

Words are always taken out by deletion for these measures (ERASER removes tokens); the
rankings compared are occlusion by deletion and by the tokenizer's mask token (every word
tried), and deletion with content words only; the more comprehensive of the first two should
be `inference.giveaway.DEFAULT_METHOD`.  95% intervals by bootstrap
over the questions (`--boot` resamples).  Cost: one question at a time, as the window asks,
on the CPU (p95 over `--latency-items` questions); and all flagged questions in one call (on
the GPU with --device cuda).

    python benchmarks/bench_giveaway.py [--model models/default] [--limit 200] [--device cpu]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.runs import Row, Run, command_line, model_fingerprint, write  # noqa: E402

RACE_TEST = ROOT.parent / "shared" / "data" / "race" / "test"
KS = (1, 3, 5)
FLAG_N = 2.0
TARGET_RATIO = 2.0  # comprehensiveness at k=3 at least twice the random baseline's
TARGET_ITEM_S = 2.0  # one question on the 2-core CPU, p95
TARGET_ALL_GPU_S = 60.0  # every flagged RACE test question on one GPU
SCAN_CHUNK = 256


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def flagged_questions(model, questions, limit: int | None, max_n: float = FLAG_N):
    """The questions the shortcut format answers with N < `max_n`, in order, up to `limit`;
    and every N seen (what the scan found, for the record)."""
    from inference import giveaway as G

    found, scanned, seen = [], 0, []
    for start in range(0, len(questions), SCAN_CHUNK):
        part = questions[start:start + SCAN_CHUNK]
        for q, s in zip(part, G.shortcut_probabilities(model, part)):
            if s is None:
                continue
            seen.append(s.n_eff)
            if s.n_eff < max_n:
                found.append(q)
        scanned += len(part)
        print(f"  scanned {scanned}/{len(questions)} questions, {len(found)} with N < {max_n:g}", file=sys.stderr)
        if limit is not None and len(found) >= limit:
            return found[:limit], scanned, seen
    return found, scanned, seen


def random_like(rng, top, by_element):
    """k random words drawn from the same elements as `top`, as many from each."""
    out = []
    need: dict = {}
    for u in top:
        need[u.alternative] = need.get(u.alternative, 0) + 1
    for alt, n in need.items():
        out += rng.sample(by_element[alt], n)
    return out


def faithfulness(model, questions, explanations, draws: int, seed: int = 0) -> dict:
    """Per question and k: comprehensiveness and sufficiency of the top-k words and of random ones."""
    from inference import giveaway as G

    rng = random.Random(seed)
    copies, plan = [], []
    for q, ex in zip(questions, explanations):
        us = G.units(q)
        unit_of = {(u.alternative, u.start, u.end): u for u in us}
        ranked = [unit_of[(a.alternative, a.start, a.end)] for a in ex.ranking()]
        by_element: dict = {}
        for u in us:
            by_element.setdefault(u.alternative, []).append(u)
        entry = {"p0": ex.probabilities[ex.predicted], "pred": ex.predicted, "k": {}}
        for k in KS:
            if len(us) < k:
                continue
            top = ranked[:k]
            slots = {"comp": len(copies)}
            copies.append(G.occlude(q, top, G.DELETE))
            slots["suff"] = len(copies)
            copies.append(G.keep_only(q, top, G.DELETE))
            slots["rand_comp"], slots["rand_suff"] = [], []
            for _ in range(draws):
                rand = random_like(rng, top, by_element)
                slots["rand_comp"].append(len(copies))
                copies.append(G.occlude(q, rand, G.DELETE))
                slots["rand_suff"].append(len(copies))
                copies.append(G.keep_only(q, rand, G.DELETE))
            entry["k"][k] = slots
        plan.append(entry)
    scores = G.shortcut_probabilities(model, copies)
    out = {k: {"comp": [], "rand_comp": [], "suff": [], "rand_suff": []} for k in KS}
    for entry in plan:
        p0, pred = entry["p0"], entry["pred"]

        def drop(i):
            return p0 - scores[i].probabilities[pred]

        for k, slots in entry["k"].items():
            out[k]["comp"].append(drop(slots["comp"]))
            out[k]["suff"].append(drop(slots["suff"]))
            out[k]["rand_comp"].append(statistics.fmean(drop(i) for i in slots["rand_comp"]))
            out[k]["rand_suff"].append(statistics.fmean(drop(i) for i in slots["rand_suff"]))
    return out


def bootstrap(a, b, reps: int, seed: int = 1) -> dict:
    """Means of a and b, their ratio and difference, each with a 95% percentile interval over
    resamples of the questions (a and b paired)."""
    import numpy as np

    a, b = np.asarray(a, float), np.asarray(b, float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(reps, len(a)))
    ma, mb = a[idx].mean(1), b[idx].mean(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ma / mb

    def ci(x):
        x = x[np.isfinite(x)]
        return [float(np.percentile(x, 2.5)), float(np.percentile(x, 97.5))] if len(x) else [None, None]

    return {"a": float(a.mean()), "a_ci": ci(ma), "b": float(b.mean()), "b_ci": ci(mb),
            "ratio": float(a.mean() / b.mean()) if b.mean() else None, "ratio_ci": ci(ratio),
            "diff": float(a.mean() - b.mean()), "diff_ci": ci(ma - mb)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "default"), help="model directory")
    ap.add_argument("--limit", type=int, default=200, help="flagged questions to measure (0: all)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu",
                    help="where the explanations run (the CPU latency is measured on the CPU in any case)")
    ap.add_argument("--draws", type=int, default=10, help="random draws per question and k")
    ap.add_argument("--boot", type=int, default=2000, help="bootstrap resamples")
    ap.add_argument("--latency-items", type=int, default=40, help="questions timed one at a time on the CPU")
    ap.add_argument("--data", default=str(RACE_TEST), help="the RACE test folder")
    ap.add_argument("--all", action="store_true",
                    help="every k-th RACE test question (--limit of them), whatever its N: issue 28's measure on all "
                         "questions, not only the flagged ones")
    ap.add_argument("--max-n", type=float, default=FLAG_N,
                    help=f"the flag: shortcut N below this (default {FLAG_N:g}, the issue's); another value "
                         "makes every row context, not the product's headline")
    args = ap.parse_args(argv)

    import inference
    from desktop import formats
    from inference import giveaway as G

    load_start = os.getloadavg()
    run = Run(benchmark="bench_giveaway", command=command_line("bench_giveaway.py", argv))
    model_dir = Path(args.model)
    questions = [q for d in formats.read(args.data) for q in d.questions()]
    model = inference.load_model(model_dir, device=args.device)
    print(f"{model.card.name} [{model.id}]: {model.message}", file=sys.stderr)
    t = time.perf_counter()
    if args.all:  # a spread of all RACE test questions, flagged or not
        step = max(1, len(questions) // max(1, args.limit or len(questions)))
        flagged = questions[::step][: args.limit or None]
        scanned = len(questions)
        seen = [s.n_eff for s in G.shortcut_probabilities(model, flagged) if s is not None]
    else:
        flagged, scanned, seen = flagged_questions(model, questions, args.limit or None, args.max_n)
    scan_s = time.perf_counter() - t
    print(f"{len(flagged)} flagged (N < {args.max_n:g}) among the first {scanned} of {len(questions)} RACE test "
          f"questions (scan {scan_s:.1f} s); N seen: min {min(seen):.2f}, 5th percentile {pct(seen, 5):.2f}, "
          f"median {statistics.median(seen):.2f}")
    if not flagged:
        raise SystemExit(f"no question with shortcut N < {args.max_n:g}: nothing to measure (a weaker shortcut "
                         "model flags none; --max-n sets another threshold, reported as context)")
    mask = G.mask_token(model.tokenizer)
    # (method, scope): the default first, then the others the product offers
    variants = [(G.DEFAULT_METHOD, G.DEFAULT_SCOPE)]
    for m in (G.DELETE, G.MASK):
        for sc in (G.ALL, G.CONTENT):
            if (m, sc) not in variants and (m != G.MASK or mask) and (m == G.DEFAULT_METHOD or sc == G.ALL):
                variants.append((m, sc))
    default = G.variant(G.DEFAULT_METHOD, G.DEFAULT_SCOPE)

    results, totals = {}, {}
    for method, scope in variants:
        name = G.variant(method, scope)
        t = time.perf_counter()
        exps = G.explain(model, flagged, method=method, scope=scope)
        totals[name] = time.perf_counter() - t
        f = faithfulness(model, flagged, exps, args.draws)
        results[name] = {k: {"comprehensiveness": bootstrap(v["comp"], v["rand_comp"], args.boot),
                             "sufficiency": bootstrap(v["suff"], v["rand_suff"], args.boot),
                             "n": len(v["comp"])} for k, v in f.items()}
        run.raw[name] = {"explain_all_s": totals[name], "per_question": f}
        print(f"\nranking by {name} (all {len(flagged)} flagged questions explained in {totals[name]:.1f} s "
              f"on {model.runner.provider})")
        for k in KS:
            c, s = results[name][k]["comprehensiveness"], results[name][k]["sufficiency"]
            print(f"  k={k}: comprehensiveness {c['a']:.3f} [{c['a_ci'][0]:.3f}, {c['a_ci'][1]:.3f}] vs random "
                  f"{c['b']:.3f} [{c['b_ci'][0]:.3f}, {c['b_ci'][1]:.3f}]  ratio {c['ratio']:.2f} "
                  f"[{c['ratio_ci'][0]:.2f}, {c['ratio_ci'][1]:.2f}]   sufficiency {s['a']:.3f} "
                  f"[{s['a_ci'][0]:.3f}, {s['a_ci'][1]:.3f}] (random {s['b']:.3f})")
    all_words = [G.variant(m, sc) for m, sc in variants if sc == G.ALL]
    best = max(all_words, key=lambda v: results[v][3]["comprehensiveness"]["a"])
    print(f"\nthe more comprehensive ranking at k=3 over all words: {best} (the default is {default})")

    # cost: one question at a time on the CPU, as the window asks: the default, and content words only
    cpu = model if model.runner.provider == "CPUExecutionProvider" else inference.load_model(model_dir, device="cpu")
    sample = flagged[:args.latency_items]
    latency = {}
    for method, scope in [(G.DEFAULT_METHOD, G.DEFAULT_SCOPE), (G.DEFAULT_METHOD, G.CONTENT)]:
        name = G.variant(method, scope)
        if name in latency:
            continue
        G.explain(cpu, sample[:1], method=method, scope=scope)  # warm-up
        times = []
        for q in sample:
            t = time.perf_counter()
            G.explain(cpu, [q], method=method, scope=scope)
            times.append(time.perf_counter() - t)
        latency[name] = times
        n_units = [len(G.units(q, scope=scope)) for q in sample]
        print(f"one question on the CPU, {name}: n={len(times)} p50 {statistics.median(times):.3f} s, "
              f"p95 {pct(times, 95):.3f} s (words tried per question: median {statistics.median(n_units):g}, "
              f"max {max(n_units)})")
    print(f"  ({cpu.runner.message})")
    run.raw["latency_s"] = latency
    run.raw["flagged"] = [q.id for q in flagged]
    run.raw["scanned"] = scanned
    run.raw["max_n"] = args.max_n
    run.raw["n_eff_seen"] = {"min": min(seen), "p5": pct(seen, 5), "median": statistics.median(seen)}
    run.raw["results"] = results
    run.raw["best_all_words"] = best

    is_default = model_dir.resolve() == (ROOT / "models" / "default").resolve()
    shipped = is_default and (args.max_n == FLAG_N or args.all)
    run.model = model_fingerprint(model_dir)
    if shipped:
        subject = "product"
    elif is_default:  # the shipped model, but not on the flagged questions
        subject = f"the shipped model on questions with N < {args.max_n:g}, not the flagged N < {FLAG_N:g}"
    else:
        subject = f"stand-in: {model.card.name}"
    rows_of = run.headline if shipped else run.context
    gpu = model.runner.provider == "CUDAExecutionProvider"
    which = (f"{len(flagged)} RACE test questions, every {max(1, scanned // max(1, len(flagged)))}th of all {scanned} "
             "whatever their shortcut N (issue 28: all questions, not only flagged ones)" if args.all else
             f"{len(flagged)} RACE test questions with shortcut N < {args.max_n:g} (the first among {scanned} scanned)")
    how = (f"{which}; top-k words by occlusion ({default}) deleted, against k random words of the same elements "
           f"({args.draws} draws); 95% bootstrap intervals over the questions")
    for k in KS:
        c = results[default][k]["comprehensiveness"]
        s = results[default][k]["sufficiency"]
        met = (c["ratio"] is not None and c["ratio"] >= TARGET_RATIO) if shipped and k == 3 else None
        # the 95% intervals go into the labels: the docs show a context row's label, not its detail
        rows_of.extend([
            Row(f"comprehensiveness at k={k}: top-k words / random words (ratio; 95% interval "
                f"{c['ratio_ci'][0]:.2f}–{c['ratio_ci'][1]:.2f})", c["ratio"], "×", subject=subject,
                target=f"≥ {TARGET_RATIO:g}×" if k == 3 else None, met=met, detail=how),
            Row(f"comprehensiveness at k={k}: top-k words deleted (95% interval {c['a_ci'][0]:.3f}–"
                f"{c['a_ci'][1]:.3f})", c["a"], "Δp", subject=subject),
            Row(f"comprehensiveness at k={k}: k random words of the same elements deleted (95% interval "
                f"{c['b_ci'][0]:.3f}–{c['b_ci'][1]:.3f})", c["b"], "Δp", subject=subject),
            Row(f"sufficiency at k={k}: only the top-k words kept, lower is better (95% interval "
                f"{s['a_ci'][0]:.3f}–{s['a_ci'][1]:.3f})", s["a"], "Δp", subject=subject),
            Row(f"sufficiency at k={k}: only k random words kept (95% interval {s['b_ci'][0]:.3f}–"
                f"{s['b_ci'][1]:.3f})", s["b"], "Δp", subject=subject),
        ])
    for name in results:
        if name != default:
            c = results[name][3]["comprehensiveness"]
            rows_of.append(Row(f"comprehensiveness at k=3, {name} ranking (not the default): top-3 words deleted "
                               f"(95% interval {c['a_ci'][0]:.3f}–{c['a_ci'][1]:.3f})", c["a"], "Δp", subject=subject))
            rows_of.append(Row(f"comprehensiveness at k=3, {name} ranking (not the default): ratio to random "
                               f"(95% interval {c['ratio_ci'][0]:.2f}–{c['ratio_ci'][1]:.2f})", c["ratio"], "×",
                               subject=subject))
    for name, times in latency.items():
        p50, p95 = statistics.median(times), pct(times, 95)
        is_default = name == default
        rows_of.append(Row(f"one question on the CPU, {name}: p95", p95 * 1000, "ms", subject=subject,
                           target="≤ 2000 ms" if is_default else None,
                           met=(p95 <= TARGET_ITEM_S) if shipped and is_default else None,
                           detail=f"{len(times)} {'' if args.all else 'flagged '}questions one at a time, as the "
                                  "window asks"))
        rows_of.append(Row(f"one question on the CPU, {name}: median", p50 * 1000, "ms", subject=subject))
    complete = args.limit == 0
    rows_of.append(Row(f"all {len(flagged)} {'' if args.all else 'flagged '}questions in one call ({'GPU' if gpu else 'CPU'}), {default}",
                       totals[default], "s", subject=subject, target="< 60 s" if gpu and complete else None,
                       met=(totals[default] < TARGET_ALL_GPU_S) if gpu and complete and shipped else None))
    run.notes.append(f"the more comprehensive ranking at k=3 over all words in this run: {best}; the product's "
                     f"default is {default}")
    write(run, load_start, gpu=None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
