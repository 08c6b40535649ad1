"""Tokenize a training pack once, on every core, and keep the token ids in one .npz file.

Tokenizing all of RACE train in both formats takes minutes on one core and every rank of a
torchrun launch would do it again; on a GPU machine's many cores in worker processes it takes
seconds, and the ranks then read the file.  The rules are `models.training.encoding.encode_all`'s (the
runtime's own `inference.formatting`), so cached and uncached runs see the same tokens.

    python -m models.training.encoded_cache --data carry/race.jsonl.gz --backbone carry/mpnet -o build/encoded.npz
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
from pathlib import Path

import numpy as np

from models.training.data import read_jsonl
from models.training.encoding import Encoded, encode_all, load_tokenizer

CHUNK = 512  # records per task: a passage's questions sit together in the pack, so its text is tokenized once


def _encode_chunk(task):
    backbone, part, formats, max_length = task
    tok = _TOKENIZERS.get(backbone) or _TOKENIZERS.setdefault(backbone, load_tokenizer(backbone))
    out = []
    for it in encode_all(tok, part, formats, max_length):
        out.append((it.rid, it.fmt, it.key, [np.asarray(x, dtype=np.int32) for x in it.ids],
                    [np.asarray(x, dtype=np.int8) for x in it.types]))
    return out


_TOKENIZERS: dict = {}


def encode_records(backbone: str, records: list[dict], formats: list[str], max_length: int,
                   processes: int | None = None) -> list:
    """`models.training.encoding.Encoded` items of `records` in `formats` (format-major order, as encode_all)."""
    processes = processes or max(1, min(48, (os.cpu_count() or 2) - 2))
    # one thread per worker process: tokenizers' own thread pool in every process would
    # oversubscribe the cores (and must not run in a parent that forks)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["RAYON_NUM_THREADS"] = "1"
    tasks = [(backbone, records[i:i + CHUNK], [f], max_length) for f in formats
             for i in range(0, len(records), CHUNK)]
    if processes > 1 and len(tasks) > 1:
        with mp.get_context("fork").Pool(processes) as pool:
            parts = pool.map(_encode_chunk, tasks, chunksize=1)
    else:
        parts = [_encode_chunk(t) for t in tasks]
    return [Encoded(rid, fmt, ids, types, key) for part in parts for rid, fmt, key, ids, types in part]


def save(path: str | Path, items: list, meta: dict | None = None) -> Path:
    seqs = [s for it in items for s in it.ids]
    types = [t for it in items for t in it.types]
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial.npz")
    np.savez(tmp, tokens=np.concatenate(seqs) if seqs else np.zeros(0, np.int32),
             types=np.concatenate(types) if types else np.zeros(0, np.int8), lengths=lengths,
             options=np.array([len(it.ids) for it in items], dtype=np.int64),
             keys=np.array([-1 if it.key is None else it.key for it in items], dtype=np.int64),
             index=np.frombuffer(json.dumps({"rid": [it.rid for it in items], "fmt": [it.fmt for it in items],
                                             "meta": meta or {}}).encode(), dtype=np.uint8))
    tmp.replace(path)
    return path


def load(path: str | Path) -> tuple[list, dict]:
    z = np.load(path)
    index = json.loads(z["index"].tobytes().decode())
    tokens, types, lengths = z["tokens"], z["types"], z["lengths"]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    items, s = [], 0
    for rid, fmt, n, key in zip(index["rid"], index["fmt"], z["options"], z["keys"]):
        ids = [tokens[starts[j]:starts[j + 1]] for j in range(s, s + n)]
        tts = [types[starts[j]:starts[j + 1]] for j in range(s, s + n)]
        items.append(Encoded(rid, fmt, ids, tts, None if key < 0 else int(key)))
        s += n
    return items, index.get("meta", {})


def encoded_for_run(args, tok, train, dev, held, formats, eval_formats):
    """Token ids of the run's records: from `--encoded` (models.training.encoded_cache) when it holds
    them, else tokenized here."""
    if getattr(args, "encoded", "") and Path(args.encoded).is_file():
        items, _ = load(args.encoded)
        by_key = {(it.rid, it.fmt): it for it in items}

        def pick(records, fmts):
            out = [by_key.get((r["id"], f)) for f in fmts for r in records]
            if any(x is None for x in out):
                return None
            return out

        got = pick(train, formats), pick(dev, eval_formats), pick(held, eval_formats)
        if all(g is not None for g in got):
            return got
        print(json.dumps({"encoded_cache": "incomplete, tokenizing here"}), flush=True)
    return (encode_all(tok, train, formats, args.max_length), encode_all(tok, dev, eval_formats, args.max_length),
            encode_all(tok, held, eval_formats, args.max_length))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.training.encoded_cache", description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="packed records (models.training.race_pack)")
    ap.add_argument("--backbone", required=True)
    ap.add_argument("--formats", default="standard,shortcut")
    ap.add_argument("--roles", default="train,dev,eval", help="which records to encode")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args(argv)
    roles = args.roles.split(",")
    records = [r for r in read_jsonl(args.data) if r["role"] in roles]
    items = encode_records(args.backbone, records, args.formats.split(","), args.max_length)
    save(args.out, items, {"roles": roles, "records": len(records), "formats": args.formats,
                           "max_length": args.max_length})
    print(json.dumps({"records": len(records), "items": len(items), "out": args.out}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
