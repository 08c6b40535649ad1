"""The page docs/models.md: the issue's targets against what was measured (`targets`), the
training, the evaluation tables, the earlier models and the GPU runbook (`write_markdown`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from inference.card import load_card
from models.report.data import (DEFAULT_RUN, EARLIER_MINILM, EARLIER_MPNET, FORMATS, GROUPS, NOTATION, ROOT, SETS,
                                TEACHER_RUN, read_json, read_rows)
from models.report.cells import agree, cell, f1, pct, size, yes
from models.report.figures import mi_groups
from models.report.frontier import plot

# Issue 28's "Must hold" lines that the model files and the build's records decide.
TEACHER_MARGIN = 0.02  # within 2.0 points of the teacher on RACE test in each format
TARGET_N2_QUESTIONS, TARGET_N2_ACCURACY = 250, 0.80
TARGET_ECE = 0.03
TARGET_AGREEMENT = 0.993
TARGET_EVI, TARGET_ALL = 55.0, 40.0
MAX_FILE_MB, MAX_TOTAL_MB = 95, 180
SEED_STANDARD, SEED_SHORTCUT = 85.0, 57.3  # the seed's ELECTRA-large on RACE++ (its Table 2)


def targets(res: dict) -> list[tuple[str, str, str, bool | None]]:
    """(what, target, measured, met) for the issue's lines that these files and records decide."""
    card = res["card"]
    ev = card.metrics["evaluation"]["formats"]
    teacher = card.training["teacher"]["race_test"]
    out = []
    for fmt in FORMATS:
        t = ev[fmt]["sets"]["race-test"]
        floor = teacher[fmt] - TEACHER_MARGIN
        out.append((f"RACE test, {fmt}", f"≥ {pct(floor)}% (the teacher's {pct(teacher[fmt])} − 2.0)",
                    f"{pct(t['accuracy'])}% [{pct(t['ci95'][0])}, {pct(t['ci95'][1])}]", t["accuracy"] >= floor))
    std, sc = ev["standard"]["sets"]["race-test"], ev["shortcut"]["sets"]["race-test"]
    out.append(("ECE after temperature on RACE test", f"≤ {pct(TARGET_ECE, 0)}% in each format",
                f"standard {pct(std['ece_after'])}%, shortcut {pct(sc['ece_after'])}%",
                max(std["ece_after"], sc["ece_after"]) <= TARGET_ECE))
    n2 = ev["shortcut"]["shortcut_n_below_2"]
    out.append(("shortcut N < 2 on RACE test", f"≥ {TARGET_N2_QUESTIONS} questions, ≥ {pct(TARGET_N2_ACCURACY, 0)}% right",
                f"{n2['n']} questions, {pct(n2['accuracy'])}% right",
                n2["n"] >= TARGET_N2_QUESTIONS and n2["accuracy"] >= TARGET_N2_ACCURACY))
    q = card.extra["quantization"]
    for recipe, by_length in sorted(q["runtime_measured"].items()):
        m = by_length[str(card.max_length)] if str(card.max_length) in by_length else next(iter(by_length.values()))
        kept = recipe in q["runtime"]
        out.append((f"CPU recipe {recipe} against the float model, RACE dev, argmax agreement",
                    f"≥ {pct(TARGET_AGREEMENT)}% in each format its graph reads to be kept",
                    f"standard {agree(m, 'standard')}, shortcut {agree(m, 'shortcut')} "
                    f"({m['standard']['questions']:,} questions): {'kept' if kept else 'not kept'}",
                    True if kept else None))
    cv = res.get("evidence_cv")
    if cv:
        h = cv["held_out"]
        out.append(("ExpMRC RACE+ dev evidence, settings chosen by cross-validation (held out)",
                    f"EVI_F1 ≥ {TARGET_EVI:.0f}, ALL_F1 ≥ {TARGET_ALL:.0f}",
                    f"EVI_F1 {h['EVI_F1']:.1f}, ALL_F1 {h['ALL_F1']:.1f} ({cv['folds']} folds by passage)",
                    h["EVI_F1"] >= TARGET_EVI and h["ALL_F1"] >= TARGET_ALL))
    sizes = res["files"]
    biggest = max(sizes, key=lambda f: f[1])
    total = sum(s for _, s in sizes)
    out.append(("model files", f"each < {MAX_FILE_MB} MB, all models ≤ {MAX_TOTAL_MB} MB",
                f"largest {biggest[0]} {biggest[1] / 1e6:.1f} MB, all {total / 1e6:.1f} MB ({len(sizes)} files; "
                "models/accurate reads the same files)",
                biggest[1] < MAX_FILE_MB * 1e6 and total <= MAX_TOTAL_MB * 1e6))
    return out


def _training(L: list, res: dict) -> None:
    a = L.append
    tr = res["card"].training
    d, hw = tr["distillation"], tr["hardware"]
    a("## Training")
    a("")
    a(f"Distilled from the teacher ({tr['teacher']['name']}, `{tr['teacher']['id']}`) by `models.training.distill` "
      f"({hw['launcher']}; torch {hw['torch']}): {d['init']}; {d['targets']}; loss {d['loss']}; the alternatives "
      f"{d['alternatives']}; {d['lengths']}; lr {d['lr']:g}, {d['precision']}, at most {d['max_tokens_per_batch']:,} "
      f"tokens a batch. {d['epochs']:.2f} epochs ({d['steps']:,} steps) in {d['train_s']:.0f} s at "
      f"{d['tokens_per_s']:,} tokens/s. {tr['data']['note'][0].upper()}{tr['data']['note'][1:]}. "
      f"De-duplication: {tr['deduplication']}.")
    a("")
    a("The candidates trained side by side on the same machine (`students/*/metrics.json`):")
    a("")
    a("| student | teacher layers | parameters | epochs | training | tokens/s | RACE dev standard (512 / 384) | RACE dev shortcut |")
    a("|---|---|---|---|---|---|---|---|")
    for name, m in res["students"].items():
        if not m:
            continue
        dev = m["dev_accuracy"]
        a(f"| {name} | {', '.join(str(x) for x in m['teacher_layers'])} | {m['parameters'] / 1e6:.1f} M | "
          f"{m['epochs']:.2f} | {m['train_s']:.0f} s on {m['gpus']} GPU{'s' if m['gpus'] > 1 else ''} | "
          f"{m['tokens_per_s']:,} | {pct(dev['512']['standard'])} / {pct(dev['384']['standard'])} | "
          f"{pct(dev['512']['shortcut'])} |")
    a("")
    a(f"The build's records and what happened during it: `{res['run'].relative_to(ROOT)}/README.md`.")
    a("")


def _earlier(L: list) -> None:
    a = L.append
    a("## Earlier models")
    a("")
    teacher = read_json(TEACHER_RUN / "card.json")
    if teacher:
        f = teacher["metrics"]["evaluation"]["formats"]
        a(f"- Until 2026-11-27 the default was the MPNet reader (`{teacher['id']}`, the teacher here): one sequence per "
          f"alternative at 512 tokens, weight-only int8; {pct(f['standard']['sets']['race-test']['accuracy'])}% / "
          f"{pct(f['shortcut']['sets']['race-test']['accuracy'])}% on RACE test. Its card and run records stay in "
          f"`{TEACHER_RUN.relative_to(ROOT)}/`; its files in git history.")
    minilm = EARLIER_MINILM / "oof_predictions.jsonl.gz"
    if minilm.is_file():
        acc = {}
        for fmt in FORMATS:
            rs = [r for r in read_rows(minilm) if r["format"] == fmt]
            acc[fmt] = (np.mean([int(np.argmax(r["logits"]) == r["key"]) for r in rs]), len(rs))
        a(f"- Until 2026-11-27 the default was a MiniLM-L6 reader (22.6 M parameters) trained on DREAM, QuAIL and, "
          f"through 4-fold cross-fitting, the EMBRACE and ExpMRC items; it answered {pct(acc['standard'][0])}% "
          f"(standard) and {pct(acc['shortcut'][0])}% (shortcut) of those {acc['standard'][1]:,} items out of fold "
          "and gave almost no item a shortcut N below 2. Its run records stay in `docs/model_runs/default/` and "
          "`docs/model_runs/cross/`; its out-of-fold machinery left with it, since the MPNet reader never trained "
          "on EMBRACE or ExpMRC.")
    first = read_json(EARLIER_MPNET / "evaluation.json")
    if first:
        s, c = (first["formats"][f]["sets"]["race-test"]["accuracy"] for f in FORMATS)
        a(f"- A first MPNet build (2026-11-26, `docs/model_runs/mpnet-4xh100/`) read {pct(s)}% / {pct(c)}% on RACE "
          "test; its checkpoint was lost with the GPU machine before its files came back.")
    a("")


def _frontier(L: list, res: dict, docs: Path) -> None:
    a = L.append
    rows = res["frontier"]
    a("## The frontier: the candidates measured")
    a("")
    a("Three students distilled from the teacher in the one-sequence layout (passage, stem and every alternative in "
      "one sequence), each read at 384 and at 512 tokens, the pair the default ships (m12 for the standard format, "
      "m6 for the shortcut) and the teacher itself (`python -m models.report.frontier`). Accuracy: RACE test with 95% "
      "Wilson intervals, and RACE dev; latency: one question "
      "through the product, both formats without evidence, p95, on the CPU of the `bench_frontier` run record.")
    a("")
    a("| candidate | layers | layout | parameters | RACE test standard | RACE test shortcut | RACE dev std / sc | ECE after T std / sc | shortcut N < 2 (right) | ExpMRC EVI / ALL | p95 both formats | p95 shortcut |")
    a("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lat = r.get("latency") or {}
        ex = r.get("expmrc") or {}
        n2 = r.get("n2") or {}
        both = f"{lat['both_ms']['p95']:,.0f} ms" if lat else "–"
        short = f"{lat['shortcut_ms']['p95']:,.0f} ms" if lat else "–"
        a(f"| {r['key']} | {r['layers']} | {r['layout']} | {r['parameters'] / 1e6:.1f} M | "
          f"{pct(r['test']['standard'])} [{pct(r['test_ci95']['standard'][0])}, {pct(r['test_ci95']['standard'][1])}] | "
          f"{pct(r['test']['shortcut'])} [{pct(r['test_ci95']['shortcut'][0])}, {pct(r['test_ci95']['shortcut'][1])}] | "
          f"{pct(r['dev']['standard'])} / {pct(r['dev']['shortcut'])} | "
          f"{pct(r['ece_after']['standard'])} / {pct(r['ece_after']['shortcut'])} | "
          f"{n2.get('n', '–')} ({pct(n2['accuracy']) if n2.get('accuracy') is not None else '–'}%) | "
          f"{f1(ex.get('EVI_F1'))} / {f1(ex.get('ALL_F1'))} | {both} | {short} |")
    a("")
    records: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("latency"):
            records.setdefault(r["latency"]["record"], []).append(r)
    if records:
        # each candidate's latest run: a later run of some candidates leaves the others' rows as measured before
        parts = [f"of {', '.join(r['key'] for r in rs)} from `docs/bench_runs/{rec}` ({rs[0]['latency']['cpu']}; flags "
                 f"{', '.join(rs[0]['latency'].get('cpu_flags') or [])}; recipe "
                 f"{', '.join(sorted({r['latency'].get('recipe') or 'the graph as stored' for r in rs}))})"
                 for rec, rs in sorted(records.items(), reverse=True)]
        a("Latency " + "; ".join(parts) + ", the recipe the runtime picked there. Accuracy of m12 is its "
          "shipped files' float model (what both kept CPU recipes compute); of m12+m6@384, the shipped default, each "
          "format's from the float model of the files that read it (the part: m6 trained again, "
          "`shortcut-m6/`); of m6 and m3 the float student on the training machine (the frontier's runs; their int8 "
          "storage agreed with it on 98-99% of RACE dev); of the teacher, its card.")
        a("")
    plot(rows, docs / "models_frontier.png")
    a("![accuracy against latency](models_frontier.png)")
    a("")
    teacher = next(r for r in rows if r["name"] == "teacher")
    floor = {f: teacher["test"][f] - TEACHER_MARGIN for f in FORMATS}
    within = [r for r in rows if r["name"] != "teacher" and all(r["test"][f] >= floor[f] for f in FORMATS)]
    below = {r["name"]: teacher["test"]["standard"] - r["test"]["standard"] for r in rows
             if r["name"] not in ("teacher",) and r not in within and r["max_length"] == 384}
    timed = [r for r in within if r.get("latency")]
    chosen = min(timed, key=lambda r: r["latency"]["both_ms"]["p95"]) if timed else None
    a(f"**The choice** (the rule is the issue's; RACE dev agrees with it): the fastest candidate within 2.0 points of "
      f"the teacher on RACE test in each format (≥ {pct(floor['standard'])} standard, ≥ {pct(floor['shortcut'])} "
      f"shortcut) — of {', '.join(r['key'] for r in within)} — is "
      + (f"{chosen['key']}" if chosen else "not yet measured") + ": `models/default`. "
      + "; ".join(f"{k} is faster but {pct(v)} points below the teacher in the standard format" for k, v in below.items())
      + ". The default is two readers: m12's 12 layers read the standard format and give the evidence, and a "
      "6-layer student (m6 trained again, `models/default/shortcut`, the card's `readers`) reads the shortcut "
      "format, which m6 reads within 2 points of the teacher at half m12's cost. m12 at 512 tokens, both formats, "
      "is the most accurate model measured (the teacher included): `models/accurate`, m12's files read further into "
      "each passage (Model > Choose the model… in the window, `--model models/accurate` on the command line).")
    a("")


def _recipes(L: list, res: dict) -> None:
    a = L.append
    q = res["card"].extra["quantization"]
    a("## int8 on the CPU")
    a("")
    a(f"Storage (`{q['recipe']}`, `models.export.int8_rows`): {q['storage']}; {q['outlier_rows']} rows in float16. The stored "
      "weights against the trained float student on RACE dev (the training machine): "
      + ", ".join(f"{k} {pct(v, 1)}%" for k, v in q["stored_vs_trained_float_agreement_dev"].items())
      + " — the files are the model: every figure here is theirs.")
    a("")
    a("The arithmetic is chosen at load from the CPU's flags (`inference.cpu_recipes`); each recipe measured on all "
      "of RACE dev against the float model of the files (PyTorch float32 on their weights):")
    a("")
    a("| recipe | length | standard agreement | shortcut agreement | mean max logit difference (std / sc) | kept |")
    a("|---|---|---|---|---|---|")
    for recipe, by_length in sorted(q["runtime_measured"].items()):
        for length, m in sorted(by_length.items()):
            d = "max_abs_logit_difference_mean"
            a(f"| {recipe} | {length} | {agree(m, 'standard')} | {agree(m, 'shortcut')} | {agree(m, 'standard', d)} / {agree(m, 'shortcut', d)} | "
              f"{'yes' if recipe in q['runtime'] else 'no'} |")
    a("")
    a(f"Kept: {', '.join(q['runtime'])} ({q['runtime_rule']}). `int8` (one pass of per-tensor u8 activations, the "
      "outlier channels in float) moves 3% of the answers: rejected. `int8x2` quantizes what the first pass rounded "
      "away a second time (about 15 bits of the activation, the stored int8 weights exactly, int8 arithmetic). "
      "`int8x2-firstN` gives the second pass to the first N of the 12 layers only: the later layers' rounding moves "
      "the logits least (screened on 60 RACE dev questions, `docs/model_runs/cpu-reader-2026-11-27/trials/"
      "late-single-pass-20261128/`), and each layer left out saves a twenty-fourth of the int8 products. "
      "A CPU with VNNI runs the fastest kept: `int8x2-first8` for the default's 12 layers, which read the standard "
      "format alone (1.04x faster than `int8x2-first9` in turns on the Xeon: `docs/bench_runs/trials/first8-20261128/`; "
      "0.45% of RACE dev's answers moved), `int8x2-first9` at 512 tokens, `int8x2` for the shortcut part. A CPU without VNNI runs `fp32`: ONNX Runtime's u8×s8 "
      "kernels there use VPMADDUBSW, whose 16-bit sums saturate on the second pass's full-range values.")
    a("")


def _int8x2_agreement(card) -> str:
    """int8x2's agreement with the float model on RACE dev per format, from the card of each format's files."""
    out = []
    for fmt in FORMATS:
        c = load_card(ROOT / "models" / "default" / card.readers[fmt]) if fmt in card.readers else card
        m = c.extra["quantization"]["runtime_measured"]["int8x2"][str(card.max_length)][fmt]
        out.append(f"{pct(m['agreement'], 2)}% ({fmt})")
    return " and ".join(out)


def write_markdown(res: dict, docs: Path) -> str:
    card = res["card"]
    tr = card.training
    ev = card.metrics["evaluation"]
    run_rel = res["run"].relative_to(ROOT)
    L: list[str] = []
    a = L.append
    a("# The shipped models")
    a("")
    a(f"Generated by `python -m models.report` from `models/default/card.json` and the build's run records in "
      f"`{run_rel}/`; do not edit by hand. The last part is the GPU runbook, `docs/models_gpu_build.md`.")
    a("")
    a("## What they are")
    a("")
    a(f"- **{card.name}** (`{card.id}`, `models/default`): the MPNet reader (`{tr['teacher']['id']}`, the default until "
      f"2026-11-27) distilled into the one-sequence layout: the passage, the stem and every alternative in one "
      f"sequence of at most {card.max_length} tokens (`inference.one_sequence`; {card.truncation}); each "
      "alternative's score pooled from its own tokens; one score per alternative, softmax over them. 12 layers, "
      "768 wide, 108.9 M parameters; one pass per question and format instead of one per alternative.")
    if card.readers:
        part = load_card(ROOT / "models" / "default" / card.readers["shortcut"])
        part_run = res["run"] / part.training["run"].split("/")[-1]
        layers = ", ".join(str(i) for i in read_json(part_run / "metrics.json")["teacher_layers"])
        a(f"- Two readers: the 12 layers read the standard format {NOTATION['standard']} and give the evidence; "
          f"**{part.name}** (`{part.id}`, `models/default/{card.readers['shortcut']}`, the card's `readers`) reads "
          f"the shortcut format {NOTATION['shortcut']} (the World Knowledge seed's passage-free model: the stem and "
          f"the alternatives, no passage): the teacher's layers {layers} distilled the same way (the frontier's m6, "
          "trained again on 2026-11-28), half the 12 layers' cost, better calibrated.")
    a("- **MPNet one-sequence reader (RACE), accurate** (`mpnet-race-oneseq-512`, `models/accurate`): the 12-layer "
      "files read at up to 512 tokens in both formats (more of each passage, slower): the most accurate model "
      "measured.")
    if not card.readers:
        a(f"- Both formats in one model: standard {NOTATION['standard']} and shortcut {NOTATION['shortcut']} (the "
          "World Knowledge seed's passage-free model: the stem and the alternatives, no passage).")
    a(f"- Temperatures (the seed's rule: accuracy = mean maximum probability, on RACE dev): "
      + ", ".join(f"{f} T = {card.temperature[f]:.4f}" for f in FORMATS) + ".")
    total = sum(s for _, s in res["files"])
    a(f"- Files: {', '.join(f'`{n}` {size(s)}' for n, s in res['files'])}; {total / 1e6:.1f} MB in all, "
      "weights as ONNX external data in files far below the 95 MB a git host accepts.")
    a("")
    a("## Against the issue's targets")
    a("")
    a("Issue 28's lines that these files and the build's records decide (the CPU speed is measured by the "
      "benchmarks: *Speed* below).")
    a("")
    a("| what | target | measured | met |")
    a("|---|---|---|---|")
    for what, target, measured, met in targets(res):
        a(f"| {what} | {target} | {measured} | {yes(met)} |")
    a("")
    _frontier(L, res, docs)
    _recipes(L, res)
    a("## Evaluation")
    a("")
    a(f"{ev['computed_by'][0].upper()}{ev['computed_by'][1:]} (`{run_rel}/eval/float32_*_{card.max_length}.jsonl.gz`; "
      "`python -m models.report` checks that the card's figures are what the rows give"
      + ("; the shortcut format's rows are the part's, in its own run folder" if card.readers else "")
      + "). The product's int8x2 recipe gave the same answers as the float model on "
      + _int8x2_agreement(card) + " of RACE dev. Accuracy (%) with 95% Wilson intervals:")
    a("")
    a("| set | questions | standard C+Q+{O} | shortcut Q+{O} |")
    a("|---|---|---|---|")
    a(f"| RACE dev (model choice, temperatures) | {tr['data']['race']['dev']:,} | "
      f"{pct(ev['formats']['standard']['dev_accuracy'])} | {pct(ev['formats']['shortcut']['dev_accuracy'])} |")
    for key, name in SETS:
        s, c = ev["formats"]["standard"]["sets"][key], ev["formats"]["shortcut"]["sets"][key]
        a(f"| {name} | {s['n']:,} | {cell(s)} | {cell(c)} |")
    a("")
    a("Chance is 25% (four alternatives). Expected calibration error (10 bins), at T = 1 → at the card's "
      "temperature:")
    a("")
    a("| set | standard | shortcut |")
    a("|---|---|---|")
    for key, name in SETS:
        cells = [f"{pct(ev['formats'][f]['sets'][key]['ece_before'])}% → {pct(ev['formats'][f]['sets'][key]['ece_after'])}%"
                 for f in FORMATS]
        a(f"| {name} | " + " | ".join(cells) + " |")
    a("")
    n2 = ev["formats"]["shortcut"]["shortcut_n_below_2"]
    a(f"**Shortcut N < 2 on RACE test** (the seed's human-study measure: questions the shortcut system is sure of "
      f"without the passage): {n2['n']} questions, {pct(n2['accuracy'])}% of them answered right. The workbench's "
      "flag *answerable without reading?* is stricter: shortcut N ≤ 1.5 and the key picked.")
    a("")
    a("## Effective number of options (Figure 4 analogue)")
    a("")
    a("![Figure 4 analogue](models_fig4_neff.png)")
    a("")
    for group, name in GROUPS:
        it = res["items"][group]
        four = it["k"] == 4
        low = it["n_sc"][four] < 2
        a(f"- {name}: mean N (4-option items) standard {it['n_std'][four].mean():.2f}, shortcut "
          f"{it['n_sc'][four].mean():.2f}; shortcut N < 2: {int(low.sum())} of {int(four.sum())}, "
          f"{pct(it['ok_sc'][four][low].mean())}% of them right.")
    a("")
    a("N = 2^H is the effective number of alternatives the model hesitates between (4 = no idea, 1 = sure); "
      "binned accuracy rises as N falls in both formats, as in the seed's Figure 4.")
    a("")
    a("## Mutual information (Figure 5 analogue)")
    a("")
    a("![Figure 5 analogue](models_fig5_mi.png)")
    a("")
    mi, groups = mi_groups(res["items"]["race-test"])
    a(f"MI = H(shortcut) − H(standard), the bits of uncertainty the passage removes, over {len(mi):,} RACE test "
      f"questions: mean {mi.mean():.3f} bits, {pct((mi < 0).mean(), 0)}% negative, 90th percentile "
      f"{np.percentile(mi, 90):.3f} bits.")
    a("")
    a("| tenth of questions by MI | mean MI (bits) | standard accuracy | shortcut accuracy |")
    a("|---|---|---|---|")
    for i, (m, s_, c) in enumerate(groups):
        a(f"| {i + 1} | {m:.3f} | {s_:.1f} | {c:.1f} |")
    a("")
    _training(L, res)
    a("## Evidence on ExpMRC RACE+ dev")
    a("")
    st = card.extra["evidence"]
    a(f"The model's evidence (`inference.evidence_choice`, idf-recall-options) weighs, besides the similarity of each "
      f"sentence to the stem and the alternatives (β {st['beta']:g}, the reader's probabilities weighting the "
      f"alternatives, IDF, short sentences taking a neighbour), the reader's own attention: how much the predicted "
      f"alternative's tokens attend to the sentence in layer {', '.join(str(x) for x in st['attention_layers'])} "
      f"({st['attention_pool']} over its tokens; {st['attention_weight']:g} of the score). It comes from the pass that "
      "gives the probabilities (`inference.option_attention`): the evidence costs no further pass.")
    a("")
    cv = res.get("evidence_cv")
    if cv:
        h = cv["held_out"]
        fam = cv.get("families_in_sample", {})
        a(f"Chosen by {cv['folds']}-fold cross-validation by passage over {cv['settings_tried']} settings "
          f"(`{run_rel}/evidence_cv.json`, from the reader's signals `evidence_signals.json.gz`): held out, pooled over "
          f"{cv['questions']} questions, EVI_F1 {h['EVI_F1']:.1f}, ANS_F1 {h['ANS_F1']:.1f}, ALL_F1 {h['ALL_F1']:.1f}. "
          "Best in sample by family: "
          + "; ".join(f"{k} {v['EVI_F1']:.1f}" for k, v in fam.items())
          + " (occlusion: the reader's drop without each of the 1-3 most similar sentences, a pass each).")
        a("")
    evd = res["evidence"]
    if evd:
        a("Through `mcqlens expmrc predict` and `mcqlens expmrc evaluate` (the official rules), all 561 questions:")
        a("")
        a("| model | ALL_F1 | ANS_F1 | EVI_F1 |")
        a("|---|---|---|---|")
        for key, s in evd.items():
            a(f"| {key} | {s['ALL_F1']} | {s['ANS_F1']} | {s['EVI_F1']} |")
        a("| seed, large PLM, most similar sent. w/ question | 36.8 | 69.0 | 48.0 |")
        a("")
    a("## Speed of the shipped model")
    a("")
    a("Filled in by `python benchmarks/render_docs.py` from the run files in `docs/bench_runs/` "
      "(run it after this report): every headline, with its command.")
    a("")
    a("<!-- bench:summary -->")
    a("<!-- /bench:summary -->")
    a("")
    _earlier(L)
    runbook = docs / "models_gpu_build.md"  # hand-written: the GPU build's device plan
    if runbook.is_file():
        a(runbook.read_text(encoding="utf-8").rstrip("\n"))
    text = "\n".join(L) + "\n"
    (docs / "models.md").write_text(text, encoding="utf-8")
    return text
