"""The cards of the CPU reader (models/default), of the 6-layer student that reads its shortcut
format (models/default/shortcut) and of its accurate reading (models/accurate), from the build's
run records alone.

    python -m models.report.cpu_reader_card [--run docs/model_runs/cpu-reader-2026-11-27] [--models models]

Every figure on a card comes from a file under `--run`: the students' training records
(`students/<name>/metrics.json`, `export.json`), the evaluation rows of the shipped files
(`eval/`: the float model of the files, PyTorch float32 on the stored weights, and the product's
CPU recipes through `models.evaluation.recipe_eval`), the evidence settings' cross-validation
(`evidence_cv.json`) and the GPU machine's environment.  Temperatures are fitted on RACE dev
(the seed's rule); RACE test, ExpMRC, EMBRACE, DREAM and QuAIL were never used to choose anything.
"""
from __future__ import annotations

import argparse
import functools
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

from inference import cpu_recipes
from inference.formatting import TRUNCATION_RULE
from models.evaluation.summary import summarise
from models.export import int8_rows

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "docs" / "model_runs" / "cpu-reader-2026-11-27"
PART = "shortcut-m6"  # RUN/PART: the 6-layer student that reads the default's shortcut format (models/default/shortcut)
AGREE_MIN = 0.993
EVAL_SETS = ("race-test", "expmrc", "embrace", "dream", "quail")
TEACHER = {"id": "mpnet-race-v1", "name": "MPNet reader (RACE)", "layout": "per-alternative",
           "race_test": {"standard": 0.670, "shortcut": 0.479},
           "record": "docs/model_runs/mpnet-4xh100-2026-11-27/evaluation.json",
           "files": "models/default/ until 2026-11-27 (git history): 111.6 MB of int8 weights"}


def rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def agreement(a: list[dict], b: list[dict]) -> dict:
    ref = {(r["id"], r["format"]): r["logits"] for r in b}
    out = {}
    for fmt in [f for f in ("standard", "shortcut") if any(r["format"] == f for r in a)]:
        pairs = [(r["logits"], ref[(r["id"], fmt)]) for r in a if r["format"] == fmt and (r["id"], fmt) in ref]
        out[fmt] = {"questions": len(pairs),
                    "agreement": float(np.mean([np.argmax(x) == np.argmax(y) for x, y in pairs])),
                    "max_abs_logit_difference_mean": float(np.mean([np.abs(np.array(x) - np.array(y)).max()
                                                                    for x, y in pairs]))}
    return out


def evaluation(run: Path, length: int) -> dict:
    dev = rows(run / "eval" / f"float32_race-dev_{length}.jsonl.gz")
    ev = [r for s in EVAL_SETS for r in rows(run / "eval" / f"float32_{s}_{length}.jsonl.gz")]
    out = summarise(dev, ev)
    if run.name == PART:  # the part reads the shortcut format only: its standard answers are not used
        out["formats"] = {"shortcut": out["formats"]["shortcut"]}
    out["computed_by"] = ("the shipped files' weights (int8 with float16 outlier rows, dequantized) in PyTorch "
                          "float32, TF32 off, on a GPU (models.float_eval): the float model the CPU recipes are "
                          "checked against")
    return out


@functools.lru_cache(maxsize=None)
def _agreements(run: Path) -> dict:
    """{recipe: {length: agreement()}} of every CPU recipe's RACE dev rows (read once per run)."""
    out = {}
    for path in sorted((run / "eval").glob("int8*_race-dev_*.jsonl.gz")):
        recipe, _, length = path.name[: -len(".jsonl.gz")].split("_")
        out.setdefault(recipe, {})[length] = agreement(rows(path), rows(run / "eval" / f"float32_race-dev_{length}.jsonl.gz"))
    return out


def recipes(run: Path, formats: tuple[str, ...] = ("standard", "shortcut")) -> dict:
    """Each CPU recipe measured on RACE dev against the float model, and which the card keeps: a
    recipe measured in every one of `formats` (those the model's graph reads) and agreeing in each."""
    return {recipe: {length: {**got, "kept": all(f in got and got[f]["agreement"] >= AGREE_MIN for f in formats)}
                     for length, got in by_length.items()}
            for recipe, by_length in _agreements(run).items()}


def evidence_settings(run: Path) -> tuple[dict, dict]:
    """(the settings the card names, the CV record's summary): the setting most folds chose."""
    cv = json.loads((run / "evidence_cv.json").read_text())
    picks: dict[str, list] = {}
    for c in cv["choices"]:
        picks.setdefault(json.dumps(c["settings"], sort_keys=True), []).append(c["fold"])
    best = max(picks, key=lambda k: (len(picks[k]), -min(picks[k])))
    return json.loads(best), {"held_out": cv["held_out"], "folds": cv["folds"], "settings_tried": cv["settings_tried"],
                              "folds_choosing_these": len(picks[best]), "record": str((run / "evidence_cv.json")
                                                                                     .relative_to(ROOT))}


def product_rows(run: Path, length: int) -> dict:
    """The product's own accuracy (the recipe a VNNI CPU runs) where the farm scored the set."""
    out = {}
    for path in sorted((run / "eval").glob(f"int8x2_*_{length}.jsonl.gz")):
        name = path.name.split("_")[1]
        rs = rows(path)
        for fmt in [f for f in ("standard", "shortcut") if any(r["format"] == f for r in rs)]:
            got = [int(np.argmax(r["logits"]) == r["key"]) for r in rs if r["format"] == fmt and r["key"] is not None]
            out.setdefault(name, {})[fmt] = {"n": len(got), "accuracy": float(np.mean(got))}
    return out


def build(run: Path, models: Path) -> tuple[dict, dict, dict]:
    # the module names on the cards are those the build ran under (models/ was flat then): the cards are
    # part of the shipped model's fingerprint (benchmarks/runs.py), so they stay as the build wrote them
    m = json.loads((run / "students" / "m12" / "metrics.json").read_text())
    export = json.loads((run / "students" / "m12" / "export.json").read_text())
    env = json.loads((run / "pipeline" / "env.json").read_text())
    rec = recipes(run)

    def runtime(length: int) -> list[str]:
        """fp32 and every int8 recipe kept at this card's length (one not measured there is not allowed)."""
        return ["fp32"] + [r for r in cpu_recipes.RECIPES if r in rec and rec[r].get(str(length), {}).get("kept")]
    settings, cv = evidence_settings(run)
    teacher_card = TEACHER
    training = {
        "teacher": teacher_card,
        "data": {"race": {"train": 87340, "dev": 4859}, "note": "the teacher's de-duplicated RACE train (no passage "
                 "of RACE test, EMBRACE or ExpMRC RACE+ dev); RACE dev chose nothing but was held out for the "
                 "temperatures and the choice among the candidates"},
        "deduplication": "models.dedup, as the teacher's card: 526 train questions of 147 passages and 28 dev questions "
                         "of 8 passages removed",
        "distillation": {"init": "the teacher's embeddings, 12 layers and scorer (its float weights recovered from its "
                                 "shipped int8 files, models.teacher)",
                         "targets": "the teacher's bf16 logits on RACE train in each format "
                                    "(docs/model_runs/cpu-reader-2026-11-27/teacher_logits_race.npz)",
                         "loss": f"(1 - alpha) CE(key) + alpha T^2 KL(teacher/T || student/T), alpha "
                                 f"{m['settings']['alpha']}, T {m['settings']['temperature']}",
                         "alternatives": "shuffled per question (teacher logits and key with them)",
                         "lengths": f"standard batches cut to {m['settings']['short_length']} tokens with probability "
                                    f"{m['settings']['short_share']}, else 512",
                         "lr": m["settings"]["lr"], "epochs": m["epochs"], "steps": m["steps"],
                         "max_tokens_per_batch": m["settings"]["max_tokens"], "precision": "bf16 autocast, fused AdamW",
                         "train_s": m["train_s"], "tokens_per_s": m["tokens_per_s"]},
        "hardware": {"gpus": m["gpus"], "gpu_name": m["gpu_name"], "launcher": "torchrun --nproc_per_node 2 -m "
                     "models.distill (2 of a 4 x H100 machine; the other candidates trained beside it)",
                     "torch": m["torch"], "cpu": env.get("cpu")},
        "command": "python -m models.cpu_reader_ship start (docs/models_gpu_build.md, 'The CPU reader')",
        "run": str(run.relative_to(ROOT)),
    }
    quantization = {
        "recipe": int8_rows.RECIPE,
        "storage": "int8 per output column for every MatMul weight (word embeddings per row); the rows of input "
                   f"channels above {int8_rows.RATIO:g}x the median channel (calibration on RACE train, at most "
                   f"{int8_rows.MOST} per tensor) kept apart in float16",
        "outlier_rows": sum(len(v) for v in export["outlier_rows"].values()),
        "stored_vs_trained_float_agreement_dev": export["agreement_stored_vs_float_dev"],
        "runtime": runtime(384),
        "runtime_measured": rec,
        "runtime_rule": f"a recipe is kept where its argmax agrees with the float model of the files on >= "
                        f"{100 * AGREE_MIN:.1f}% of RACE dev in both formats",
        "files": export["files"],
    }
    base = {"backbone": "sentence-transformers/all-mpnet-base-v2 (through the teacher, mpnet-race-v1)",
            "formats": ["standard", "shortcut"], "layout": "one-sequence", "pooling": "options",
            "truncation": TRUNCATION_RULE + "; every alternative follows the stem in the one sequence",
            "cloze": "a stem containing '_' keeps its gap; the alternatives follow it (one-sequence layout)",
            "files": {"int8": "model.int8.onnx"}, "tokenizer": "tokenizer.json",
            "inputs": ["input_ids", "attention_mask", "option_ids"], "training": training,
            "quantization": quantization, "evidence": settings, "created": time.strftime("%Y-%m-%d"),
            "command": "python -m models.cpu_reader_card (from the build's run records)"}
    cards = {}
    for name, length, title, ident in (("default", 384, "MPNet one-sequence reader (RACE), fast", "mpnet-race-oneseq-384"),
                                       ("accurate", 512, "MPNet one-sequence reader (RACE), accurate",
                                        "mpnet-race-oneseq-512")):
        ev = evaluation(run, length)
        card = {"name": title, "id": ident, **base, "max_length": length,
                "quantization": {**quantization, "runtime": runtime(length)},
                "temperature": {f: ev["formats"][f]["temperature"] for f in ("standard", "shortcut")},
                "metrics": {"evaluation": ev, "product_int8x2": product_rows(run, length), "evidence_cv": cv}}
        if name == "accurate":
            card["weights"] = "../default"
            card["note"] = ("the default's files read at up to 512 tokens: more of each passage, slower; "
                            "the most accurate model measured")
        cards[name] = card
    part = part_card(run, base, training, quantization)
    # the default hands its shortcut format to the part: its temperature and figures are the part's
    default = cards["default"]
    default.update(id="mpnet-race-oneseq-384-sc6", readers={"shortcut": "shortcut"},
                   note="the shortcut format (the stem and alternatives without the passage) is read by the "
                        "6-layer student in shortcut/ (its card); the standard format and the evidence by the "
                        "12 layers here")
    default["temperature"]["shortcut"] = part["temperature"]["shortcut"]
    # its 12 layers now read the standard format only: a recipe is kept by its agreement there
    std = recipes(run, ("standard",))
    default["quantization"] = {
        **default["quantization"], "runtime_measured": std,
        "runtime": ["fp32"] + [r for r in cpu_recipes.RECIPES if std.get(r, {}).get("384", {}).get("kept")],
        "runtime_rule": f"a recipe is kept where its argmax agrees with the float model of the files on >= "
                        f"{100 * AGREE_MIN:.1f}% of RACE dev in the standard format, the one these 12 layers "
                        f"read (the shortcut format is the part's: shortcut/card.json)"}
    default["metrics"]["evaluation"]["formats"]["shortcut"] = part["metrics"]["evaluation"]["formats"]["shortcut"]
    for name, by_format in part["metrics"]["product_int8x2"].items():
        default["metrics"]["product_int8x2"].setdefault(name, {})["shortcut"] = by_format["shortcut"]
    return default, cards["accurate"], part


def part_card(run: Path, base: dict, training: dict, quantization: dict) -> dict:
    """The card of the 6-layer student that reads the default's shortcut format (RUN/PART)."""
    p = run / PART
    m = json.loads((p / "metrics.json").read_text())
    export = json.loads((p / "export.json").read_text())
    env = json.loads((p / "pipeline" / "env.json").read_text())
    gap = json.loads((p / "vocab_gap_check.json").read_text())
    rec = recipes(p, ("shortcut",))
    ev = evaluation(p, 384)
    layers = ", ".join(str(i) for i in m["teacher_layers"])
    return {
        "name": "MPNet 6-layer shortcut reader (RACE)", "id": "mpnet-race-oneseq-6-shortcut",
        **{k: base[k] for k in ("backbone", "layout", "pooling", "truncation", "cloze", "files", "tokenizer",
                                "inputs", "created")},
        "formats": ["shortcut"], "max_length": 384,
        "part_of": "models/default: it reads the default's shortcut format (the default card's 'readers')",
        "temperature": {"shortcut": ev["formats"]["shortcut"]["temperature"]},
        "training": {**training,
                     "distillation": {**training["distillation"],
                                      "init": f"the teacher's embeddings, its layers {layers} and scorer (its float "
                                              "weights recovered from its shipped int8 files, models.teacher)",
                                      "lr": m["settings"]["lr"], "epochs": m["epochs"], "steps": m["steps"],
                                      "train_s": m["train_s"], "tokens_per_s": m["tokens_per_s"],
                                      "formats": "both, as every candidate of the frontier (m6); only its shortcut "
                                                 "answers are used"},
                     "hardware": {"gpus": m["gpus"], "gpu_name": m["gpu_name"], "launcher": "python -m models.distill "
                                  "(models.shipping.cpu_reader_ship start --plan m6:6:0:5e-5)",
                                  "torch": m["torch"], "cpu": env.get("cpu")},
                     "command": "python -m models.shipping.cpu_reader_ship start --plan \"m6:6:0:5e-5\" "
                                "--schedule-seconds 470 (the teacher's logits carried, not recomputed)",
                     "run": str(p.relative_to(ROOT))},
        "quantization": {**{k: quantization[k] for k in ("recipe", "storage")},
                         "outlier_rows": sum(len(v) for v in export["outlier_rows"].values()),
                         "stored_vs_trained_float_agreement_dev": {k: v for k, v in
                                                                   export["agreement_stored_vs_float_dev"].items()
                                                                   if k.startswith("shortcut")},
                         "runtime": ["fp32"] + [r for r in cpu_recipes.RECIPES
                                                if r in rec and rec[r].get("384", {}).get("kept")],
                         "runtime_measured": rec,
                         "runtime_rule": f"a recipe is kept where its argmax agrees with the float model of the "
                                         f"files on >= {100 * AGREE_MIN:.1f}% of RACE dev in the shortcut format, "
                                         f"the one it reads",
                         "vocab_gap": {"rows_left_out": gap["vocab_gap"]["rows_left_out"], "why": gap["vocab_gap"]["why"],
                                       "record": str((p / "vocab_gap_check.json").relative_to(ROOT))},
                         "files": gap["files"]},
        "metrics": {"evaluation": ev, "product_int8x2": product_rows(p, 384)},
        "command": base["command"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.report.cpu_reader_card", description=__doc__.split("\n")[0])
    ap.add_argument("--run", default=str(RUN))
    ap.add_argument("--models", default=str(ROOT / "models"))
    args = ap.parse_args(argv)
    default, accurate, part = build(Path(args.run).resolve(), Path(args.models))
    for name, card in (("default", default), ("accurate", accurate), ("default/shortcut", part)):
        d = Path(args.models) / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "card.json").write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        ev = card["metrics"]["evaluation"]["formats"]
        print(name, {f: round(100 * ev[f]["sets"]["race-test"]["accuracy"], 1) for f in ev},
              "runtime", card["quantization"]["runtime"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
