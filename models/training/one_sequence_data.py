"""Training data in the one-sequence layout: every record of a pack encoded once by the runtime's
own rules (`inference.one_sequence`), kept as flat arrays, cut and batched per step.

    python -m models.training.one_sequence_data --pack race.jsonl.xz --tokenizer tokenizer.json -o enc.npz

A question is encoded at the longest length (512 tokens) once; a batch trained at 384 cuts the
passage's end (`Sequence1.cut_to`), so the same arrays serve both lengths.  The alternatives of a
training question may be shuffled (`permuted`): the teacher scored each alternative on its own,
so the student should not learn where the key tends to stand.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from inference.formatting import load_tokenizer
from inference.one_sequence import FORMATS, Sequence1, tokenize
from models.training.data import read_jsonl


@dataclass
class Item:
    rid: str
    fmt: str
    role: str
    key: int
    seq: Sequence1

    @property
    def length(self) -> int:
        return len(self.seq.ids)


def _encode_chunk(args):
    tokenizer_path, chunk, fmt, max_length = args
    tok = load_tokenizer(tokenizer_path)
    seqs = tokenize(tok, [(r["passage"], r["stem"], r["alternatives"]) for r in chunk], fmt, max_length)
    return [(r["id"], fmt, r["role"], -1 if r.get("key") is None else int(r["key"]), s.ids, s.option_ids,
             s.passage_span, s.options) for r, s in zip(chunk, seqs)]


def encode(records: list[dict], tokenizer_path: str, formats=FORMATS, max_length: int = 512,
           processes: int = 1, chunk: int = 512) -> list[Item]:
    jobs = [(str(tokenizer_path), records[i:i + chunk], fmt, max_length)
            for fmt in formats for i in range(0, len(records), chunk)]
    if processes > 1:
        with get_context("spawn").Pool(processes) as pool:
            parts = pool.map(_encode_chunk, jobs)
    else:
        parts = [_encode_chunk(j) for j in jobs]
    return [Item(rid, fmt, role, key, Sequence1(list(ids), list(opt), tuple(span), n))
            for part in parts for rid, fmt, role, key, ids, opt, span, n in part]


def save(items: list[Item], path: str | Path) -> None:
    lengths = np.array([it.length for it in items], dtype=np.int64)
    np.savez(path, ids=np.concatenate([np.asarray(it.seq.ids, np.int32) for it in items]),
             option_ids=np.concatenate([np.asarray(it.seq.option_ids, np.int8) for it in items]),
             lengths=lengths, spans=np.array([it.seq.passage_span for it in items], dtype=np.int32),
             options=np.array([it.seq.options for it in items], dtype=np.int8),
             keys=np.array([it.key for it in items], dtype=np.int16),
             rids=np.array([it.rid for it in items]), fmts=np.array([it.fmt for it in items]),
             roles=np.array([it.role for it in items]))


def load(path: str | Path) -> list[Item]:
    with np.load(path) as z:  # each z[...] reads the array again: read every one once
        arrays = {k: z[k] for k in z.files}
    lengths = arrays["lengths"]
    ends = np.cumsum(lengths)
    starts = ends - lengths
    ids, opt = arrays["ids"].tolist(), arrays["option_ids"].tolist()
    rids, fmts, roles = arrays["rids"].tolist(), arrays["fmts"].tolist(), arrays["roles"].tolist()
    keys, spans, options = arrays["keys"].tolist(), arrays["spans"].tolist(), arrays["options"].tolist()
    return [Item(str(rids[i]), str(fmts[i]), str(roles[i]), int(keys[i]),
                 Sequence1(ids[a:b], opt[a:b], (int(spans[i][0]), int(spans[i][1])), int(options[i])))
            for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist()))]


def permuted(seq: Sequence1, order: list[int]) -> Sequence1:
    """The question with its alternatives in `order` (new position j holds old alternative order[j])."""
    first = next((i for i, o in enumerate(seq.option_ids) if o), len(seq.ids))
    ids, opt = list(seq.ids[:first]), list(seq.option_ids[:first])
    runs: dict[int, list[int]] = {}
    for i in range(first, len(seq.ids)):
        runs.setdefault(seq.option_ids[i], []).append(seq.ids[i])
    for j, old in enumerate(order):
        part = runs.get(old + 1, [])
        ids += part
        opt += [j + 1] * len(part)
    return Sequence1(ids, opt, seq.passage_span, seq.options)


def batches(items: list[Item], max_tokens: int, rng: random.Random | None, group: int = 1,
            max_questions: int = 64) -> list[list[int]]:
    """Length-bucketed batches of at most `max_tokens` padded tokens; shuffled in runs of `group`
    neighbours (one per data-parallel rank, so that the ranks of a step wait little)."""
    order = sorted(range(len(items)), key=lambda i: items[i].length)
    out, cur, width = [], [], 0
    for i in order:
        w = max(width, items[i].length)
        if cur and ((len(cur) + 1) * w > max_tokens or len(cur) >= max_questions):
            out.append(cur)
            cur, w = [], items[i].length
        cur.append(i)
        width = w
    if cur:
        out.append(cur)
    if rng is not None:
        runs = [out[i:i + group] for i in range(0, len(out), max(1, group))]
        rng.shuffle(runs)
        out = [b for run in runs for b in run]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.training.one_sequence_data", description=__doc__.split("\n")[0])
    ap.add_argument("--pack", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--roles", default="train,dev,eval")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--processes", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    args = ap.parse_args(argv)
    roles = set(args.roles.split(","))
    records = [r for r in read_jsonl(args.pack) if r["role"] in roles and r.get("alternatives")]
    items = encode(records, args.tokenizer, FORMATS, args.max_length, args.processes)
    save(items, args.out)
    print(json.dumps({"items": len(items), "out": args.out}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
