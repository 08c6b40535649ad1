"""Training items: any file `desktop.formats` reads, or an MCQ Lens database, as plain records.

A record is one question with its passage, as a JSON-able dict:
``{"id", "source", "group", "passage", "stem", "alternatives", "key", "role"}``.
``group`` is a hash of the passage text, so that questions sharing a passage always
fall in the same cross-fitting fold (the passage itself would otherwise leak).
``role`` says what a record is for:

* ``train`` — out-of-domain training data (DREAM, QuAIL);
* ``dev`` — the split early stopping and the temperatures are chosen on;
* ``crossfit`` — in-domain items (RACE: EMBRACE, ExpMRC) that are trained on only
  through k folds, so that every prediction stored for them is out of fold.

Records are packed into one JSONL file so that a GPU machine, which cannot see
../shared/data, gets exactly the items the command line chose.
"""
from __future__ import annotations

import argparse
import copy
import gzip
import hashlib
import json
import lzma
import sys
from pathlib import Path
from typing import Iterable

from desktop.domain import nota
from desktop.formats import door
from desktop.store import Store

TRAIN, DEV, CROSSFIT = "train", "dev", "crossfit"
# Sources whose items are RACE questions: in-domain for the product's users.
IN_DOMAIN = ("race", "embrace", "expmrc")


def passage_group(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:12]


def _hash_fraction(key: str) -> float:
    return int(hashlib.md5(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF


def role_for(source: str, split: str | None, group: str, dev_fraction: float) -> str:
    """DREAM keeps its own dev split; QuAIL (only its dev set and challenge set are here)
    and sources without splits give a stable share of passages to dev."""
    if source in IN_DOMAIN:
        return CROSSFIT
    s = (split or "").lower()
    if source != "quail" and s:
        return DEV if s.startswith("dev") or s in ("valid", "validation") else TRAIN
    return DEV if _hash_fraction(group) < dev_fraction else TRAIN


def records_from_datasets(datasets, dev_fraction: float = 0.15) -> list[dict]:
    """Every keyed question of the datasets as a record; unkeyed questions cannot be trained on."""
    out: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for ds in datasets:
        for p in ds.passages:
            group = passage_group(p.text)
            source = p.source or ds.source
            for q in p.questions:
                if q.key is None or not q.alternatives:
                    continue
                # The same question can reach us twice (EMBRACE and ExpMRC both draw on RACE).
                sig = (group, q.stem.strip())
                if sig in seen:
                    continue
                seen.add(sig)
                rec = {
                    "id": f"{source}:{q.id}",
                    "source": source,
                    "group": group,
                    "passage": p.text,
                    "stem": q.stem,
                    "alternatives": list(q.alternatives),
                    "key": int(q.key),
                    "role": role_for(source, p.split, group, dev_fraction),
                }
                if "nota" in q.extra:  # the NOTA alternative: formatting treats it specially in cloze stems
                    rec["nota"] = q.extra["nota"]["replaced"]
                out.append(rec)
    return out


def load_datasets(paths: Iterable[str]):
    """Datasets from files or folders (`desktop.formats`) and MCQ Lens databases (`.db`)."""
    datasets = []
    for path in paths:
        if str(path).endswith((".db", ".sqlite")):
            store = Store.open(path, read_only=True)  # reading training data never creates or migrates
            try:
                datasets.extend(store.load_datasets())
            finally:
                store.close()
        else:
            datasets.extend(door.read(path))  # the door every command reads a user's file through
    return datasets


def _open(path, mode):
    # Packed files travel to GPU machines with a size limit: .gz keeps them small.
    if str(path).endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")
    if str(path).endswith(".xz"):  # a third smaller than .gz for the RACE pack (20 vs 29 MB)
        return lzma.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def write_jsonl(records: list[dict], path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with _open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def read_jsonl(path: str | Path) -> list[dict]:
    with _open(path, "r") as f:
        return [json.loads(line) for line in f if line.strip()]


def with_nota(datasets, c: float, seed: int | str = 0):
    """The None-of-the-above seed's transform with proportion C (`desktop.domain.nota`).

    Passages whose questions already have an unanswerable alternative (QuAIL's "not
    enough information") keep them as they are: the transform needs answerable items.
    """
    out = []
    for ds in datasets:
        eligible = [p for p in ds.passages if not any(q.unanswerable_alternatives for q in p.questions)]
        kept = [p for p in ds.passages if any(q.unanswerable_alternatives for q in p.questions)]
        transformed, _ = nota.transform(eligible, c, seed)
        new = copy.copy(ds)
        new.passages = transformed + kept
        out.append(new)
    return out


def load_records(paths: Iterable[str], dev_fraction: float = 0.15, nota: float | None = None,
                 nota_seed: int | str = 0) -> list[dict]:
    """Records from packed JSONL files and from anything `load_datasets` reads (optionally NOTA-transformed)."""
    records: list[dict] = []
    others = []
    for p in paths:
        if str(p).endswith((".jsonl", ".jsonl.gz", ".jsonl.xz")) and _is_packed(p):
            records.extend(read_jsonl(p))
        else:
            others.append(p)
    if others:
        datasets = load_datasets(others)
        if nota is not None:
            datasets = with_nota(datasets, nota, nota_seed)
        records.extend(records_from_datasets(datasets, dev_fraction))
    return records


def _is_packed(path: str) -> bool:
    with _open(path, "r") as f:
        first = f.readline()
    try:
        return {"group", "role", "alternatives"} <= set(json.loads(first))
    except (ValueError, TypeError):
        return False


DEFAULT_SOURCES = (
    "../shared/data/dream/train.json",
    "../shared/data/dream/test.json",
    "../shared/data/dream/dev.json",
    "../shared/data/quail/quail_1.3_dev.xml",
    "../shared/data/quail/challenge.jsonl",
    "../shared/data/embrace/embrace_green.jsonl",
    "../shared/data/embrace/embrace_yellow.jsonl",
    "../shared/data/expmrc/expmrc-race-dev.json",
)


def summary(records: list[dict]) -> dict:
    out: dict[str, dict[str, int]] = {}
    for r in records:
        out.setdefault(r["source"], {}).setdefault(r["role"], 0)
        out[r["source"]][r["role"]] += 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.training.data", description="Pack training items into one JSONL file.")
    ap.add_argument("sources", nargs="*", default=list(DEFAULT_SOURCES))
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--dev-fraction", type=float, default=0.15)
    ap.add_argument("--nota", type=float, default=None, metavar="C",
                    help="apply the None-of-the-above transform with proportion C before packing")
    ap.add_argument("--nota-seed", default="0")
    args = ap.parse_args(argv)
    records = load_records(args.sources, args.dev_fraction, args.nota, args.nota_seed)
    write_jsonl(records, args.out)
    print(json.dumps(summary(records), indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
