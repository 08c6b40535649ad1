"""Training's token ids and batches: the records encoded by the runtime's own rules
(`inference.formatting`), length-bucketed batches and the [B, O, T] tensors of a batch,
collated on a helper thread ahead of the GPU."""
from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

def load_tokenizer(backbone: str):
    from inference.formatting import load_tokenizer as load

    path = Path(backbone) / "tokenizer.json"
    if not path.exists():  # a Hugging Face directory with only a slow tokenizer's files
        from transformers import AutoTokenizer

        from inference.formatting import prepare_tokenizer

        return prepare_tokenizer(AutoTokenizer.from_pretrained(backbone, use_fast=True).backend_tokenizer)
    return load(path)


class Encoded:
    """One question in one format: token and segment ids per alternative (unpadded)."""

    __slots__ = ("rid", "fmt", "ids", "types", "key", "length")

    def __init__(self, rid, fmt, ids, types, key):
        self.rid, self.fmt, self.ids, self.types, self.key = rid, fmt, ids, types, key
        self.length = max(len(x) for x in ids)


def encode_all(tokenizer, records, formats, max_length, chunk: int = 256) -> list[Encoded]:
    """Encode by the runtime's own rules (`inference.formatting`), so training and scoring see the same tokens."""
    from inference.formatting import encoder_texts, tokenize_items

    out = []
    for fmt in formats:
        for start in range(0, len(records), chunk):
            part = records[start:start + chunk]
            items = [encoder_texts(r["passage"], r["stem"], r["alternatives"], fmt, nota_index=r.get("nota"))
                     for r in part]
            for r, row in zip(part, tokenize_items(tokenizer, items, max_length)):
                out.append(Encoded(r["id"], fmt, [ids for ids, _ in row], [t for _, t in row], r.get("key")))
    return out


def batches(items: list[Encoded], max_tokens: int, max_questions: int, shuffle: bool, rng: random.Random,
            group: int = 1):
    """Length-bucketed batches: little padding, a bounded number of tokens per step.

    With `group` > 1 (the number of data-parallel ranks) the batches are shuffled in runs
    of `group` neighbours in length, so the batches that the ranks run in one step are of
    about the same length: a step waits for its slowest rank.
    """
    order = sorted(range(len(items)), key=lambda i: items[i].length)
    out, cur, cur_len, cur_opts = [], [], 0, 0
    for i in order:
        it = items[i]
        n_len = max(cur_len, it.length)
        n_opts = max(cur_opts, len(it.ids))
        if cur and ((len(cur) + 1) * n_opts * n_len > max_tokens or len(cur) >= max_questions):
            out.append(cur)
            cur, n_len, n_opts = [], it.length, len(it.ids)
        cur.append(i)
        cur_len, cur_opts = n_len, n_opts
    if cur:
        out.append(cur)
    if shuffle:
        runs = [out[i:i + group] for i in range(0, len(out), max(1, group))]
        rng.shuffle(runs)
        out = [b for run in runs for b in run]
    return out


PAD_MULTIPLE = 8  # token widths padded to a multiple of 8: the fused attention kernels' alignment


def collate(items: list[Encoded], idx: list[int], torch, pad_id: int = 0, cls_sep=(101, 102)):
    """[B, O, T] int64 tensors (ids, types, mask), the option mask and the keys of a batch."""
    import numpy as np

    n_opt = max(len(items[i].ids) for i in idx)
    length = max(items[i].length for i in idx)
    length = -(-length // PAD_MULTIPLE) * PAD_MULTIPLE
    B = len(idx)
    ids = np.full((B, n_opt, length), pad_id, dtype=np.int64)
    types = np.zeros((B, n_opt, length), dtype=np.int64)
    mask = np.zeros((B, n_opt, length), dtype=np.int64)
    opt_mask = np.zeros((B, n_opt), dtype=bool)
    keys = np.full((B,), -100, dtype=np.int64)
    for b, i in enumerate(idx):
        it = items[i]
        for o in range(n_opt):
            if o < len(it.ids):
                seq, tt = it.ids[o], it.types[o]
                opt_mask[b, o] = True
            else:  # an absent alternative: a harmless [CLS][SEP], masked out of the softmax
                seq, tt = cls_sep, (0, 0)
            n = len(seq)
            ids[b, o, :n] = seq
            types[b, o, :n] = tt
            mask[b, o, :n] = 1
        if it.key is not None:
            keys[b] = it.key
    return (torch.from_numpy(ids), torch.from_numpy(types), torch.from_numpy(mask), torch.from_numpy(opt_mask),
            torch.from_numpy(keys))


def prefetched(items, batch_list, torch, device, ahead: int = 3):
    """(index list, tensors on `device`) per batch, collated on a helper thread `ahead` batches
    early so the GPU does not wait for Python (pinned memory, asynchronous copies)."""
    cuda = str(device).startswith("cuda")

    def make(idx):
        t = collate(items, idx, torch)
        return tuple(x.pin_memory() for x in t) if cuda else t

    with ThreadPoolExecutor(1) as pool:
        futures = [pool.submit(make, idx) for idx in batch_list[:ahead]]
        for n, idx in enumerate(batch_list):
            t = futures[n].result()
            futures[n] = None
            if n + ahead < len(batch_list):
                futures.append(pool.submit(make, batch_list[n + ahead]))
            yield idx, tuple(x.to(device, non_blocking=True) for x in t)
