"""Regenerate docs/models.md and its figures for the shipped default model.

    python -m models.report [--model models/default] [--run docs/model_runs/default] [--docs docs]

Everything is computed from files in the repository: the model card, the run's
out-of-fold predictions on the RACE items (EMBRACE green+yellow, ExpMRC RACE+ dev),
the final model's dev predictions (DREAM dev, QuAIL held-out passages), and
../shared/data for the evidence references.  Accuracy intervals are Wilson 95%
intervals; probabilities use the card's temperature per format (raw logits for the
'before' ECE).  Formats the model was not trained on ({O}, {O}+C) are reported as
what the standard+shortcut model does with such inputs, marked as such.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"
NOTATION = {"standard": "C+Q+{O}", "shortcut": "Q+{O}", "options": "{O}", "options_context": "{O}+C"}
FORMATS = ("standard", "shortcut", "options", "options_context")
SETS = (("expmrc", "ExpMRC RACE+ dev (out of fold)"), ("embrace", "EMBRACE green+yellow (out of fold)"),
        ("dream", "DREAM dev"), ("quail", "QuAIL held-out passages"))
SEED_TABLE2 = {"standard": (85.01, 70.05, 48.60), "shortcut": (57.32, 54.04, 34.80),
               "options": (41.76, 21.44, 34.00), "options_context": (68.20, 54.61, 46.00)}


def _rows(path: Path) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


class Table:
    """Logits per (set, format), aligned by question id."""

    def __init__(self, rows: list[dict]):
        self.by: dict[tuple[str, str], dict[str, dict]] = {}
        for r in rows:
            src = r["id"].split(":", 1)[0]
            self.by.setdefault((src, r["format"]), {})[r["id"]] = r

    def arrays(self, src: str, fmt: str, ids=None):
        from models.predictions import arrays

        rows = self.by.get((src, fmt), {})
        ids = ids if ids is not None else sorted(rows)
        _, z, keys = arrays([rows[i] for i in ids])
        return ids, z, keys


def _acc_cell(z, keys) -> tuple[str, float]:
    k = int((z.argmax(1) == keys).sum())
    n = len(keys)
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]", 100 * k / n


def compute(model_dir: Path, run_dir: Path) -> dict:
    from inference.card import load_card
    from inference.metrics import effective_options, entropy_bits, expected_calibration_error, softmax

    card = load_card(model_dir)
    t = Table(_rows(run_dir / "oof_predictions.jsonl.gz") + _rows(run_dir / "dev_predictions.jsonl.gz"))
    res: dict = {"card": card, "acc": {}, "ece": {}, "n": {}}
    for src, _ in SETS:
        for fmt in FORMATS:
            ids, z, keys = t.arrays(src, fmt)
            if not len(ids):
                continue
            res["n"][src] = len(ids)
            res["acc"][(src, fmt)] = _acc_cell(z, keys)
            temp = card.temperature_for(fmt) if fmt in card.formats else 1.0
            res["ece"][(src, fmt)] = (expected_calibration_error(softmax(z), keys),
                                      expected_calibration_error(softmax(z, temp), keys) if fmt in card.formats else None)
    # per-item measures on the RACE items (both systems, calibrated)
    items = {}
    for src in ("expmrc", "embrace"):
        ids, zs, keys = t.arrays(src, "standard")
        _, zc, _ = t.arrays(src, "shortcut", ids)
        ps, pc = softmax(zs, card.temperature_for("standard")), softmax(zc, card.temperature_for("shortcut"))
        items[src] = {"n_std": effective_options(ps), "n_sc": effective_options(pc),
                      "mi": entropy_bits(pc) - entropy_bits(ps),
                      "ok_std": ps.argmax(1) == keys, "ok_sc": pc.argmax(1) == keys,
                      "k": np.isfinite(zs).sum(1)}
    res["items"] = items
    res["summary"] = json.loads((run_dir / "summary.json").read_text())
    res["cross"] = cross_table(run_dir.parent / "cross", t)
    return res


CROSS_RUNS = (("dream_only", "DREAM only"), ("quail_only", "QuAIL only"))


def cross_table(cross_dir: Path, main: Table) -> dict:
    """Accuracy per (training data, format, evaluation set); RACE items never trained on (out of fold for 'all')."""
    out = {}
    runs = [(name, label, Table(_rows(cross_dir / f"{name}_predictions.jsonl.gz")))
            for name, label in CROSS_RUNS if (cross_dir / f"{name}_predictions.jsonl.gz").exists()]
    runs.append(("all", "DREAM + QuAIL + RACE (cross-fitted)", main))
    for name, label, table in runs:
        for fmt in ("standard", "shortcut"):
            for src, _ in SETS:
                ids, z, keys = table.arrays(src, fmt)
                if len(ids):
                    out[(label, fmt, src)] = 100 * float((z.argmax(1) == keys).mean())
    return {"labels": [label for _, label, _ in runs], "acc": out}


MIN_BIN = 10  # accuracy of a bin with fewer questions is noise: not drawn


def _nei_share(path: Path):
    """(share of QuAIL dev questions answered 'not enough information', share where it is the key)."""
    if not path.exists():
        return None
    from models.data import load_records

    recs = {r["id"]: r for r in load_records([str(DATA / "quail" / "quail_1.3_dev.xml"),
                                              str(DATA / "quail" / "challenge.jsonl")])}
    chose = key = n = 0
    for r in _rows(path):
        q = recs.get(r["id"])
        if r["format"] != "standard" or q is None or q["role"] != "dev":
            continue
        n += 1
        chose += "not enough information" in q["alternatives"][int(np.argmax(r["logits"]))].lower()
        key += "not enough information" in q["alternatives"][q["key"]].lower()
    return (chose / n, key / n) if n else None


def figure4(items: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharex=True)
    edges = np.arange(1.0, 4.0001, 0.2)
    centres = edges[:-1] + 0.1
    for col, src in enumerate(("expmrc", "embrace")):
        it = items[src]
        four = it["k"] == 4  # N is bounded by the number of alternatives: the 4-option items
        for key, ok, label, colour in (("n_std", "ok_std", "standard C+Q+{O}", "tab:blue"),
                                       ("n_sc", "ok_sc", "shortcut Q+{O}", "tab:orange")):
            n = it[key][four]
            correct = it[ok][four]
            idx = np.clip(np.digitize(n, edges) - 1, 0, len(centres) - 1)  # N = 4 exactly joins the last bin
            counts = np.bincount(idx, minlength=len(centres))
            acc = np.array([correct[idx == b].mean() * 100 if counts[b] >= MIN_BIN else np.nan
                            for b in range(len(centres))])
            off = -0.05 if key == "n_std" else 0.05
            axes[0, col].bar(centres + off, counts, width=0.1, color=colour, label=label)
            axes[1, col].plot(centres, acc, "o-", color=colour, label=label)
        axes[0, col].set_title(f"{'ExpMRC RACE+ dev' if src == 'expmrc' else 'EMBRACE green+yellow'} "
                               f"({int(four.sum())} four-option items, out of fold)", fontsize=10)
        axes[0, col].set_ylabel("questions")
        axes[1, col].set_ylabel(f"accuracy (%), bins with ≥ {MIN_BIN} items")
        axes[1, col].set_xlabel("effective number of options N = 2^H (bins of 0.2)")
        axes[1, col].axhline(25, color="grey", lw=0.8, ls=":")
        axes[1, col].set_ylim(0, 100)
        axes[0, col].legend(fontsize=8)
    fig.suptitle("Figure 4 analogue: effective number of options and binned accuracy (calibrated)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def mi_groups(items: dict, n_groups: int = 10):
    """Items sorted by MI in equal-count groups: (mean MI, standard accuracy, shortcut accuracy) each."""
    mi = np.concatenate([items[s]["mi"] for s in ("expmrc", "embrace")])
    ok_std = np.concatenate([items[s]["ok_std"] for s in ("expmrc", "embrace")])
    ok_sc = np.concatenate([items[s]["ok_sc"] for s in ("expmrc", "embrace")])
    groups = np.array_split(np.argsort(mi, kind="stable"), n_groups)
    return mi, [(mi[g].mean(), ok_std[g].mean() * 100, ok_sc[g].mean() * 100) for g in groups]


def figure5(items: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mi, groups = mi_groups(items)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    a1.hist(mi, bins=np.arange(np.floor(mi.min() * 10) / 10, mi.max() + 0.05, 0.05), color="tab:green")
    a1.axvline(0, color="grey", lw=0.8)
    a1.set_ylabel("questions (bins of 0.05 bits)")
    a1.set_title(f"Figure 5 analogue: {len(mi)} RACE items (ExpMRC + EMBRACE, out of fold) by\n"
                 "MI = H(shortcut) − H(standard); accuracy per tenth of the items sorted by MI", fontsize=10)
    x = [g[0] for g in groups]
    a2.plot(x, [g[1] for g in groups], "o-", label="standard C+Q+{O}")
    a2.plot(x, [g[2] for g in groups], "s-", label="shortcut Q+{O}")
    a2.axhline(25, color="grey", lw=0.8, ls=":")
    a2.set_ylabel("accuracy (%) of the tenth")
    a2.set_xlabel("MI (bits); points at the mean MI of each tenth")
    a2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def evidence_scores() -> dict:
    """The three evidence methods on RACE+ dev with out-of-fold answers (the official scorer)."""
    from desktop.commands.expmrc import predict
    from desktop.domain.expmrc_metric import score_multiple_choice
    from models import evidence

    dataset = json.loads((DATA / "expmrc" / "expmrc-race-dev.json").read_text(encoding="utf-8"))
    path = str(DATA / "expmrc" / "expmrc-race-dev.json")
    out = {}
    for m in evidence.METHODS:
        out[m] = score_multiple_choice(dataset, predict(path, ROOT / "models" / "default", m, log=lambda *_: None))
    # the evidence methods alone, given the key (an upper reference for what the reader costs)
    gold = {}
    index = evidence.SentenceIndex([s["article"] for s in dataset["data"]])
    for m in evidence.METHODS:
        preds = {}
        for s in dataset["data"]:
            for j, q in enumerate(s["questions"]):
                k = "ABCD".index(s["answers"][j])
                e = evidence.predict(m, s["article"], q, s["options"][j], k,
                                     [float(i == k) for i in range(len(s["options"][j]))], index)
                preds[f"{s['id']}-{j}"] = {"answer": s["answers"][j], "evidence": e.text if e else ""}
        gold[m] = score_multiple_choice(dataset, preds)["EVI_F1"]
    return {"predicted": out, "gold": gold, "embrace": embrace_basis_f1()}


def embrace_basis_f1() -> dict:
    """Evidence F1 against EMBRACE's basis spans of the key, out-of-fold answers (a check on another annotation)."""
    from desktop.domain.expmrc_metric import evidence_f1
    from desktop.formats import embrace
    from inference.metrics import softmax
    from models import evidence

    oof = {}
    for r in _rows(ROOT / "models" / "default" / "oof_predictions.jsonl"):
        if r["format"] == "standard":
            oof[r["id"]] = softmax(np.array(r["logits"]))
    passages = []
    for f in ("green", "yellow"):
        ds = embrace.read(DATA / "embrace" / f"embrace_{f}.jsonl")
        for d in ds if isinstance(ds, list) else [ds]:
            passages.extend(d.passages)
    index = evidence.SentenceIndex([p.text for p in passages])
    got = {m: [] for m in evidence.METHODS}
    for p in passages:
        for q in p.questions:
            refs = [s.text(p.text) for s in q.spans_with("basis", q.key)] if q.key is not None else []
            probs = oof.get(f"embrace:{q.id}")
            if not refs or probs is None:
                continue
            for m in got:
                e = evidence.predict(m, p.text, q.stem, q.alternatives, int(np.argmax(probs)), list(probs), index)
                got[m].append(evidence_f1(e.text if e else "", refs))
    return {m: (100 * float(np.mean(v)), len(v)) for m, v in got.items()}


def write_markdown(res: dict, ev: dict, docs: Path) -> str:
    card = res["card"]
    exp = card.extra.get("export", {})
    runs = res["summary"]["runs"]
    args = res["summary"]["args"]
    L = []
    a = L.append
    a("# The shipped default model")
    a("")
    a("Regenerate this page and its figures with `python -m models.report` (reads `models/default/`, "
      "`docs/model_runs/default/` and `../shared/data`). Rebuild the model itself with "
      "`python -m models.build_default` on a GPU machine (see below).")
    a("")
    a("## What it is")
    a("")
    a(f"- **{card.name}** (`{card.id}`), backbone {card.backbone}: 6 layers, 384 wide, 22.6 M parameters.")
    a(f"- One model serves both formats: standard C+Q+{{O}} and shortcut Q+{{O}} (the seed's Figure 2 "
      f"architecture: each alternative encoded with the stem and, in the standard format, the passage; "
      f"{card.pooling} pooling; one score per alternative; softmax over the alternatives). Max length "
      f"{card.max_length} tokens, passage cut first.")
    a(f"- Training data: DREAM train+test (8,156 questions), QuAIL dev set + challenge set minus held-out "
      f"passages (2,548); RACE items only through cross-fitting: EMBRACE green+yellow (1,165) and ExpMRC RACE+ "
      f"dev (561), {args['crossfit']} folds by passage. Dev (early stopping, temperatures): DREAM dev (2,040) + "
      f"QuAIL held-out passages (161).")
    a(f"- Hyper-parameters: lr {args['lr']}, batch ≤ {args['batch_size']} questions / {args['max_tokens']} tokens, "
      f"≤ {args['epochs']} epochs with early stopping on dev (patience {args['patience']}), seed {args['seed']}, "
      f"bf16 autocast; {len(runs)} runs (4 folds + final) in parallel on one H200, about 6 minutes.")
    a(f"- Temperatures (dev, accuracy = mean maximum probability): "
      + ", ".join(f"{f} T = {t:.3f}" for f, t in card.temperature.items()) + ".")
    a(f"- File: `model.int8.onnx` ({(ROOT / 'models/default/model.int8.onnx').stat().st_size / 1e6:.1f} MB), "
      f"{exp.get('int8_scheme', '')}. ONNX fp32 export matched PyTorch within {exp.get('max_abs_diff_fp32', 0):.1e} "
      f"(fused: {', '.join(f'{k} {v}' for k, v in exp.get('fused_operators', {}).items())}); the int8 graph "
      f"agrees with fp32 on {100 * exp.get('int8_agreement', 0):.2f}% of {exp.get('validation_questions')} "
      f"dev questions × formats. ONNX Runtime's dynamic quantization was tried first and rejected: "
      f"{exp.get('dynamic_int8_rejected', 'n/a')} (the reader's margins between alternatives are small, "
      "median 0.4–0.6 logits, and rounding activations moves logits by up to 1.5).")
    a("- `models/default/oof_predictions.jsonl`: the out-of-fold standard and shortcut logits of every "
      "EMBRACE and ExpMRC question. The shipped model trained on those items, so its own predictions on them "
      "are in-sample; `mcqlens expmrc predict` answers them from this file, and the numbers below use it.")
    a("")
    a("## Accuracy per format (95% Wilson intervals)")
    a("")
    a("| input format | " + " | ".join(f"{name} (n={res['n'].get(s, 0)})" for s, name in SETS) + " |")
    a("|---|" + "---|" * len(SETS))
    for fmt in FORMATS:
        trained = fmt in card.formats
        label = f"{fmt} {NOTATION[fmt]}" + ("" if trained else " — not trained on")
        a(f"| {label} | " + " | ".join(res["acc"].get((s, fmt), ("–", 0))[0] for s, _ in SETS) + " |")
    a("")
    a("Chance is 25% for the 4-option RACE and QuAIL items and 33.3% for DREAM's 3 options "
      "(a few ExpMRC items have 3).")
    a("")
    a("## Calibration: expected calibration error (10 bins), before → after temperature")
    a("")
    a("| format | " + " | ".join(name for _, name in SETS) + " |")
    a("|---|" + "---|" * len(SETS))
    for fmt in card.formats:
        cells = []
        for s, _ in SETS:
            e = res["ece"].get((s, fmt))
            cells.append("–" if e is None else f"{100 * e[0]:.1f}% → {100 * e[1]:.1f}%")
        a(f"| {fmt} | " + " | ".join(cells) + " |")
    a("")
    a("The temperature is fitted on dev (DREAM + QuAIL) where the model is overconfident (T > 1). On the "
      "RACE items the same model is less accurate, so the dev temperature is not enough there: a model "
      "that is calibrated on one distribution is not calibrated on a harder one. The probabilities shown "
      "in the workbench should be read with that in mind.")
    a("")
    a("## Cross-performance (analogue of the seed's Table 2)")
    a("")
    a("Accuracy (%) by training data and system. Three MiniLM models were trained with the same recipe: on "
      "DREAM alone, on QuAIL alone, and the shipped one (DREAM + QuAIL + RACE items through cross-fitting). "
      "RACE items are never scored by a model that trained on them (for the shipped model: out of fold); "
      "a model's own source is in-domain, the others are cross-domain. The seed's ELECTRA-large rows are its "
      "Table 2 (evaluated on RACE++, COSMOS, ReClor).")
    a("")
    a("| training data | system | RACE: ExpMRC | RACE: EMBRACE | DREAM dev | QuAIL held-out |")
    a("|---|---|---|---|---|---|")
    a("| – (chance) | | 25.0 | 25.0 | 33.3 | 25.0 |")
    cross = res["cross"]
    for label in cross["labels"]:
        for fmt in ("standard", "shortcut"):
            cells = [f"{cross['acc'][(label, fmt, s)]:.1f}" if (label, fmt, s) in cross["acc"] else "–"
                     for s, _ in SETS]
            a(f"| {label} | {'stan.' if fmt == 'standard' else 'no con.'} | " + " | ".join(cells) + " |")
    a("")
    a("| seed: training data | system | RACE++ | COSMOS | ReClor |")
    a("|---|---|---|---|---|")
    for fmt in ("standard", "shortcut"):
        a(f"| RACE++ | {'stan.' if fmt == 'standard' else 'no con.'} | "
          + " | ".join(f"{x:.2f}" for x in SEED_TABLE2[fmt]) + " |")
    a("")
    nei = _nei_share(ROOT / "docs" / "model_runs" / "cross" / "dream_only_predictions.jsonl.gz")
    gains = {}
    for fmt in ("standard", "shortcut"):
        all_label = cross["labels"][-1]
        gains[fmt] = [cross["acc"][(all_label, fmt, s)] - cross["acc"][(lab, fmt, s)]
                      for lab in cross["labels"][:-1] for s in ("expmrc", "embrace")
                      if (lab, fmt, s) in cross["acc"]]
    if nei is not None and all(gains.values()):
        a(f"The DREAM-only model is below chance on QuAIL because it picks QuAIL's \"not enough information\" "
          f"alternative, which DREAM never has, for {100 * nei[0]:.0f}% of the held-out QuAIL questions (it is the "
          f"key of {100 * nei[1]:.0f}%). Adding the 1,726 RACE items through cross-fitting raises the standard "
          f"system's RACE accuracy by {min(gains['standard']):.1f}–{max(gains['standard']):.1f} points over either "
          f"out-of-domain source alone (the shortcut system's by {min(gains['shortcut']):.1f}–"
          f"{max(gains['shortcut']):.1f}); the shortcut systems stay above chance on RACE, the seed's point that "
          "part of the skill does not need the passage.")
        a("")
    a("### Other inputs (analogue of the seed's Table A.1), shipped model")
    a("")
    a("The shipped model was trained on standard and shortcut inputs only; {O} and {O}+C show what it "
      "does with those inputs (the seed trains a system per input).")
    a("")
    a("| input | RACE: ExpMRC | RACE: EMBRACE | DREAM dev | QuAIL held-out | seed: RACE++ → RACE++ | → COSMOS | → ReClor |")
    a("|---|---|---|---|---|---|---|---|")
    for fmt in FORMATS:
        ours = [f"{res['acc'][(s, fmt)][1]:.1f}" if (s, fmt) in res["acc"] else "–" for s, _ in SETS]
        tag = "" if fmt in card.formats else " (not trained)"
        a(f"| {NOTATION[fmt]}{tag} | " + " | ".join(ours) + " | "
          + " | ".join(f"{x:.1f}" for x in SEED_TABLE2[fmt]) + " |")
    a("")
    a("### Why these numbers are far below the seed's (85.0% standard, 57.3% shortcut on RACE++)")
    a("")
    a("- **Model size**: ELECTRA-large (340 M parameters per model, 24 layers) against MiniLM-L6 (22.6 M, 6 layers), "
      "and a deep ensemble of three seeds against one model. The backbone was pretrained for sentence "
      "embeddings, not as a cross-encoder reader.")
    a("- **In-domain data**: the seed fine-tunes on 100,388 RACE++ training questions; here the only RACE "
      "items are 1,726 EMBRACE/ExpMRC questions, each fold model seeing 3/4 of them. DREAM (dialogues, "
      "3 options) and QuAIL (fiction/news with 'not enough information') are out of domain.")
    a("- **Hard subsets**: EMBRACE is RACE-H (high school) and ExpMRC's RACE+ sits at 69% for the seed's "
      "large baselines; RACE++ includes the easier middle-school part.")
    a("- **Shortcut gap**: the seed's shortcut system is 27.7 points below its standard system; here the gap "
      "on RACE is a few points, because the reader makes little use of the passage at all. Shortcut accuracy "
      "above chance is still visible, i.e. world knowledge/option priors are learned even by a small model. "
      "Treat the shortcut probabilities as a weak signal, and re-train a larger model (the same command "
      "with `--backbone`) when a stronger encoder is available.")
    a("")
    a("## Effective number of options (Figure 4 analogue)")
    a("")
    a("![Figure 4 analogue](models_fig4_neff.png)")
    a("")
    for src, name in SETS[:2]:
        it = res["items"][src]
        four = it["k"] == 4
        a(f"- {name}: mean N (4-option items) standard {it['n_std'][four].mean():.2f}, shortcut "
          f"{it['n_sc'][four].mean():.2f}; items with shortcut N < 2: {int((it['n_sc'][four] < 2).sum())} "
          f"of {int(four.sum())}.")
    a("")
    a("Unlike the seed's Figure 4, most items sit near N = 4 for both systems: after calibration the small "
      "reader is rarely confident. Where there are enough items to see (bins of at least 10), accuracy rises "
      "as N falls for both systems, noisily: from about 30% in the last bin (N near 4) to roughly 50% for "
      "the standard system and, on EMBRACE, 64–75% for the few shortcut items at N 2.4–2.8, i.e. questions "
      "answered without the passage. Few items reach the low shortcut N that the seed's Figure 4 shows.")
    a("")
    a("## Mutual information (Figure 5 analogue)")
    a("")
    a("![Figure 5 analogue](models_fig5_mi.png)")
    a("")
    mi = np.concatenate([res["items"][s]["mi"] for s in ("expmrc", "embrace")])
    mi, groups = mi_groups(res["items"])
    a(f"MI = H(shortcut) − H(standard) over {len(mi)} RACE items: mean {mi.mean():.3f} bits, "
      f"{100 * (mi < 0).mean():.0f}% negative, 90th percentile {np.percentile(mi, 90):.3f} bits.")
    a("")
    a("| tenth of items by MI | mean MI (bits) | standard accuracy | shortcut accuracy |")
    a("|---|---|---|---|")
    for i, (m, s_, c) in enumerate(groups):
        a(f"| {i + 1} | {m:.3f} | {s_:.1f} | {c:.1f} |")
    a("")
    a(f"As in the seed, the standard system is most accurate where the passage lowers the entropy most: "
      f"{groups[-1][1]:.1f}% in the top tenth against {groups[0][1]:.1f}% in the bottom one. Unlike the "
      f"seed, the shortcut system's accuracy also rises with MI ({groups[0][2]:.1f}% → {groups[-1][2]:.1f}%): "
      "with a weak reader, high MI marks items that are easier overall more than items that need the "
      f"passage, and the MI values themselves are small (at most 2 bits are possible with four options; "
      f"here 90% of items are below {np.percentile(mi, 90):.2f}). Negative MI, which "
      "the seed also observes, comes from the two systems being different approximations.")
    a("")
    a("## Evidence on ExpMRC RACE+ dev (official scoring rules)")
    a("")
    a("Answers from the out-of-fold predictions (standard format); evidence by each method; "
      "`mcqlens expmrc predict ../shared/data/expmrc/expmrc-race-dev.json -o P.json --evidence METHOD` "
      "then `mcqlens expmrc evaluate ... P.json` reproduces a row.")
    a("")
    a("| evidence method | ALL_F1 | ANS_F1 | EVI_F1 | EVI_F1 given the key |")
    a("|---|---|---|---|---|")
    best = max(ev["predicted"], key=lambda m: float(ev["predicted"][m]["EVI_F1"]))
    for m, s in ev["predicted"].items():
        evi = f"**{s['EVI_F1']}**" if m == best else s["EVI_F1"]
        a(f"| {m} | {s['ALL_F1']} | {s['ANS_F1']} | {evi} | {ev['gold'][m]} |")
    a("| seed, large PLM, most similar sent. w/ question | 36.8 | 69.0 | 48.0 | |")
    a("| seed, base PLM, most similar sent. w/ question | 31.5 | 62.4 | 44.5 | |")
    a("")
    a("**idf-recall-options** (`models/evidence.py`): each passage sentence (split on . ! ?) is scored by "
      "an IDF-weighted F-beta (β = 2, recall-leaning, because references are longer than the average "
      "sentence: median 17 against 11 scored tokens) against stem + alternative, summed over the "
      "alternatives with weights ½ × the reader's probability + ½ × uniform, so a weak reader's wrong "
      "answer does not pull the evidence away from the stem; a sentence under 10 tokens takes its "
      "better-scoring neighbour along. It beats the seed's best RACE+ dev baseline (48.0) even with a "
      "reader at ~40% answer accuracy (the seed's large readers: 69%). Its design was chosen on this "
      "dev set; checked on another annotation, EMBRACE's basis spans of the key (out-of-fold answers), it "
      "ranks the methods the same way: "
      + ", ".join(f"{m} {v[0]:.1f}" for m, v in ev["embrace"].items())
      + f" evidence F1 over {next(iter(ev['embrace'].values()))[1]} items with a key basis.")
    a("")
    cv_file = ROOT / "docs" / "model_runs" / "default" / "evidence_cv.json"
    if cv_file.is_file():
        from models.evidence_cv import markdown

        a("The method's structure was designed on this dev set; its settings are chosen by cross-validation "
          "inside it, so the figure to quote is the held-out one:")
        a("")
        a(markdown(json.loads(cv_file.read_text(encoding="utf-8"))))
        a("")
    a("## Speed of the shipped model")
    a("")
    a("Filled in by `python benchmarks/render_docs.py` from the run files in `docs/bench_runs/` "
      "(run it after this report): every headline, with its command.")
    a("")
    a("<!-- bench:summary -->")
    a("<!-- /bench:summary -->")
    a("")
    a("## Training runs")
    a("")
    a("| run | train questions | epochs run | best dev (mean of standard, shortcut) | held-out RACE standard | held-out RACE shortcut |")
    a("|---|---|---|---|---|---|")
    for name, r in runs.items():
        h = r.get("heldout_accuracy", {})
        a(f"| {name} | {r['n_train']} | {len(r['history'])} | {100 * r['best_dev']:.1f} | "
          f"{100 * h['standard']:.1f} | {100 * h['shortcut']:.1f} |" if h else
          f"| {name} | {r['n_train']} | {len(r['history'])} | {100 * r['best_dev']:.1f} | – | – |")
    a("")
    a("## Reproduce")
    a("")
    a("```")
    a("python -m models.build_default        # on a GPU machine; = the three steps below")
    a("python -m models.data -o carry/build/data.jsonl.gz")
    a("python -m models.train --data carry/build/data.jsonl.gz --out carry/build/run --crossfit 4 --jobs 5 \\")
    a("    --epochs 4 --patience 2 --lr 5e-5 --pooling mean --seed 1 --time-budget 490 \\")
    a("    --eval-formats standard,shortcut,options,options_context")
    a("python -m models.package --run carry/build/run --out models/default --data carry/build/data.jsonl.gz --validation 200")
    a("python -m models.report               # this page")
    a("```")
    a("")
    a("`mcqlens train` takes the same options as `python -m models.train` (any Hugging Face BERT directory as "
      "`--backbone`, any file `desktop.formats` reads or an MCQ Lens database as `--data`, formats standard, "
      "shortcut, options, options_context, any number of alternatives). The run copied into "
      "`docs/model_runs/default/` is the one the shipped model comes from.")
    text = "\n".join(L) + "\n"
    (docs / "models.md").write_text(text, encoding="utf-8")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.report", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "default"))
    ap.add_argument("--run", default=str(ROOT / "docs" / "model_runs" / "default"))
    ap.add_argument("--docs", default=str(ROOT / "docs"))
    args = ap.parse_args(argv)
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    res = compute(Path(args.model), Path(args.run))
    figure4(res["items"], docs / "models_fig4_neff.png")
    figure5(res["items"], docs / "models_fig5_mi.png")
    ev = evidence_scores()
    write_markdown(res, ev, docs)
    print(f"wrote {docs / 'models.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
