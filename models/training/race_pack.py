"""Pack the MPNet build's data into one gzipped JSONL file for the GPU machine (28.9 MB).

Records as `models.training.data` writes them (`id, source, group, passage, stem, alternatives,
key, role`), plus `level` for RACE:

* role ``train``: RACE train without the evaluation passages (`models.training.dedup`);
* role ``dev``: RACE dev without them (early stopping, temperatures);
* role ``eval``: what the model is evaluated on and never trains or tunes on — RACE test
  (high and middle), ExpMRC RACE+ dev, EMBRACE green + yellow, DREAM dev, QuAIL dev.
  `models.training.train` ignores this role; `models.evaluation.checkpoint_eval` reads it.

    python -m models.training.race_pack -o carry/race.jsonl.gz [--data ../shared/data]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from models.training import dedup
from models.training.data import load_datasets, passage_group, records_from_datasets, write_jsonl

EVAL = "eval"


def race_records(passages, role: str, source: str = "race") -> list[dict]:
    out = []
    for p in passages:
        group = passage_group(p.article)
        for j, (stem, opts, ans) in enumerate(zip(p.questions, p.options, p.answers)):
            out.append({"id": f"{source}:{p.file}#{j}", "source": source, "split": p.split, "level": p.level,
                        "group": group, "passage": p.article, "stem": stem, "alternatives": list(opts),
                        "key": "ABCDEFGH".index(ans.strip()), "role": role})
    return out


def eval_records(data: Path) -> list[dict]:
    """ExpMRC, EMBRACE, DREAM dev and QuAIL dev as evaluation records (their own readers)."""
    files = [data / "expmrc" / "expmrc-race-dev.json", data / "embrace" / "embrace_green.jsonl",
             data / "embrace" / "embrace_yellow.jsonl", data / "dream" / "dev.json",
             data / "quail" / "quail_1.3_dev.xml"]
    recs = records_from_datasets(load_datasets([str(f) for f in files]))
    for r in recs:
        r["role"] = EVAL
    return recs


def pack(data: str | Path) -> tuple[list[dict], dict]:
    """(records, counts) of the build's data."""
    data = Path(data)
    splits = dedup.training_splits(data)
    test = dedup.read_race(data / "race", "test")
    records = (race_records(splits["train"].kept, "train") + race_records(splits["dev"].kept, "dev")
               + race_records(test, EVAL) + eval_records(data))
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        counts.setdefault(r["role"], {}).setdefault(r["source"], 0)
        counts[r["role"]][r["source"]] += 1
    removed = {s: {"passages": len(d.removed), "questions": d.removed_questions} for s, d in splits.items()}
    return records, {"records": counts, "removed": removed}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.training.race_pack", description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2].parent / "shared" / "data"))
    args = ap.parse_args(argv)
    records, counts = pack(args.data)
    write_jsonl(records, args.out)
    print(json.dumps(counts, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
