"""Distil the MPNet reader into a one-sequence student (`models.training.one_sequence_reader`).

    python -m models.training.distill --data enc.npz --teacher-logits logits_race.npz --teacher build/teacher \\
        --layers 6 --out build/students/m6 --schedule-seconds 540 [--lr 5e-5]
    torchrun --nproc_per_node 2 -m models.training.distill ...      # data-parallel over GPUs

The student starts from the teacher's embeddings, scorer and `--layers` of its layers (evenly
spaced, the last kept: `one_sequence_reader.spread`), and learns on RACE train from the teacher's
logits in the same format (soft labels at temperature T) and the key (hard label):

    loss = (1 − α) · CE(student, key) + α · T² · KL(softmax(teacher / T) ‖ softmax(student / T))

Both formats (standard C+Q+{O} and shortcut Q+{O}) in one model, as the teacher.  Each batch
of standard questions is cut to 384 tokens with probability `--short-share` (the passage's end
goes, as the runtime cuts it), so one model serves both lengths; the alternatives of every
question are shuffled (teacher logits and key with them).  The schedule (linear warm-up, linear
decay) is fitted to `--schedule-seconds` from the speed of the first steps.

At the end (rank 0): float32 logits of RACE dev and the evaluation records at each length of
`--eval-lengths` (`logits_eval.npz`), the weights (`model/`, fp32, stay on the machine) and
`metrics.json` (dev accuracy per format and length, speed, settings).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

from models.training.distributed import Dist
from models.training.one_sequence_data import Item, batches, load, permuted

PROBE_STEPS = 30
PAD_MULTIPLE = 8


def teacher_table(path) -> dict[tuple[str, str], np.ndarray]:
    z = np.load(path)
    out = {}
    for rid, fmt, row in zip(z["ids"], z["formats"], z["logits"].astype(np.float32)):
        out[(str(rid), str(fmt))] = row
    return out


def collate(items: list[Item], idx: list[int], torch, pad_id: int, rng: random.Random | None, cut: int | None,
            teacher: dict | None):
    """Tensors of one batch: ids, mask, option ids [B, T]; keys [B]; teacher logits [B, K] (or None)."""
    seqs, keys, soft = [], [], []
    for i in idx:
        it = items[i]
        s = it.seq.cut_to(cut) if cut and it.fmt == "standard" else it.seq
        order = list(range(s.options))
        if rng is not None:
            rng.shuffle(order)
            s = permuted(s, order)
        seqs.append(s)
        keys.append(order.index(it.key) if 0 <= it.key < s.options else -100)
        if teacher is not None:
            t = teacher.get((it.rid, it.fmt))
            soft.append(None if t is None else t[order])
    width = max(len(s.ids) for s in seqs)
    width = -(-width // PAD_MULTIPLE) * PAD_MULTIPLE
    k = max(s.options for s in seqs)
    ids = np.full((len(seqs), width), pad_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    opt = np.zeros_like(ids)
    for b, s in enumerate(seqs):
        n = len(s.ids)
        ids[b, :n], mask[b, :n], opt[b, :n] = s.ids, 1, s.option_ids
    t_arr = None
    if teacher is not None:
        t_arr = np.full((len(seqs), k), -1e4, dtype=np.float32)
        for b, t in enumerate(soft):
            if t is not None:
                row = np.nan_to_num(np.asarray(t, np.float32)[:k], nan=-1e4)
                t_arr[b, : len(row)] = row
            else:
                t_arr[b] = 0.0  # no teacher row: a uniform target (its KL term is constant)
    tt = (lambda a: torch.from_numpy(a))
    return tt(ids), tt(mask), tt(opt), k, torch.tensor(keys), (tt(t_arr) if t_arr is not None else None)


def predict(model, items: list[Item], torch, device, max_tokens: int, cut: int | None, pad_id: int) -> list[list[float]]:
    """float32 logits per item, in order (no dropout, no shuffling)."""
    model.eval()
    out: list = [None] * len(items)
    with torch.no_grad():
        for idx in batches(items, max_tokens, None, max_questions=128):
            ids, mask, opt, k, _, _ = collate(items, idx, torch, pad_id, None, cut, None)
            z = model(ids.to(device), mask.to(device), opt.to(device), k).float().cpu().numpy()
            for b, i in enumerate(idx):
                out[i] = z[b, : items[i].seq.options].tolist()
    return out


def accuracy(items: list[Item], logits) -> dict[str, float]:
    res: dict[str, list[int]] = {}
    for it, z in zip(items, logits):
        if it.key >= 0:
            res.setdefault(it.fmt, []).append(int(int(np.argmax(z)) == it.key))
    return {f: sum(v) / len(v) for f, v in res.items()}


def build_student(args, torch):
    from models.training.one_sequence_reader import load as load_student, mpnet_student, spread

    if args.init_student:  # go on from a saved student
        return load_student(args.init_student)
    from safetensors.numpy import load_file

    state = load_file(str(Path(args.teacher) / "state.safetensors"))
    cfg = json.loads((Path(args.teacher) / "config.json").read_text())
    n = int(cfg["num_hidden_layers"])
    layers = spread(n, args.layers) if args.layers else list(range(n))
    model = mpnet_student(state, cfg, layers)
    model.teacher_layers = layers
    return model


def run(args) -> dict:
    import torch
    import torch.nn.functional as F

    dist_ = Dist(torch)
    torch.manual_seed(args.seed)
    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    device = dist_.start(device)
    cuda = str(device).startswith("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    items = load(args.data)
    train = [it for it in items if it.role == "train"]
    if args.limit:
        train = train[: args.limit]
    evals = [it for it in items if it.role in ("dev", "eval")]
    if args.limit:
        evals = [it for it in evals if it.role == "dev"][: max(16, args.limit // 4)]
    teacher = teacher_table(args.teacher_logits) if args.teacher_logits else None
    pad_id = int(json.loads((Path(args.teacher) / "config.json").read_text()).get("pad_token_id", 1))
    core = build_student(args, torch).to(device)
    layers = getattr(core, "teacher_layers", None)
    model = dist_.wrap(core, device)
    params = [p for p in core.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01, **({"fused": True} if cuda else {}))
    rng = random.Random(args.seed)  # the same on every rank: the same batches in the same order
    aug = random.Random(args.seed * 7919 + dist_.rank)  # each rank's own shuffles of alternatives
    per_epoch = len(dist_.share(batches(train, args.max_tokens, random.Random(0), dist_.world, args.max_questions)))
    plan = {"total": per_epoch * args.epochs, "warm": min(200, max(1, per_epoch * args.epochs // 20))}

    def lr_at(step):
        total, warm = plan["total"], plan["warm"]
        return min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    T, alpha = args.temperature, args.alpha
    steps, seen, tokens, losses, history = 0, 0, 0, [], []
    t_train, stop = None, False
    for epoch in range(args.epochs):
        model.train()
        bl = dist_.share(batches(train, args.max_tokens, rng, dist_.world, args.max_questions))
        for idx in bl:
            if steps >= plan["total"]:
                stop = True
                break
            if t_train is None:
                t_train = time.time()
            if args.schedule_seconds and steps == PROBE_STEPS:
                if cuda:
                    torch.cuda.synchronize()
                per_step = (time.time() - t_train) / PROBE_STEPS
                left = args.schedule_seconds - (time.time() - t0)
                total = dist_.from_main(int(PROBE_STEPS + max(0.0, left) / per_step))
                plan["total"] = max(PROBE_STEPS + 1, min(total, per_epoch * args.epochs))
                plan["warm"] = max(1, min(plan["warm"], plan["total"] // 20))
                if dist_.main:
                    print(json.dumps({"run": out.name, "schedule_steps": plan["total"], "steps_per_epoch": per_epoch,
                                      "s_per_step": round(per_step, 4),
                                      "epochs_planned": round(plan["total"] / per_epoch, 2)}), flush=True)
            cut = args.short_length if aug.random() < args.short_share else None
            ids, mask, optids, k, keys, soft = collate(train, idx, torch, pad_id, aug, cut, teacher)
            n_tokens = int(mask.sum())  # counted on the host: no device sync per step
            ids, mask, optids, keys = ids.to(device), mask.to(device), optids.to(device), keys.to(device)
            with torch.autocast("cuda", dtype=torch.bfloat16) if cuda else _null():
                z = model(ids, mask, optids, k)
            z = z.float()
            loss = F.cross_entropy(z, keys, ignore_index=-100)
            if soft is not None and alpha > 0:
                soft = soft.to(device)
                kd = F.kl_div(F.log_softmax(z / T, -1), F.softmax(soft / T, -1), reduction="batchmean") * T * T
                loss = (1 - alpha) * loss + alpha * kd
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            steps += 1
            seen += len(idx) * dist_.world
            tokens += n_tokens * dist_.world
            losses.append(float(loss.detach()) if steps % 50 == 0 else None)
            if dist_.main and steps % 200 == 0:
                print(json.dumps({"run": out.name, "step": steps, "of": plan["total"], "epoch": epoch + 1,
                                  "loss": losses[-1], "lr": sched.get_last_lr()[0],
                                  "s": round(time.time() - t0, 1)}), flush=True)
        history.append({"epoch": epoch + 1, "steps": steps, "s": round(time.time() - t0, 1)})
        if stop or steps >= plan["total"]:
            break
    if cuda:
        torch.cuda.synchronize()
    train_s = time.time() - (t_train or time.time())
    result = {}
    if dist_.main:
        torch.backends.cuda.matmul.allow_tf32 = False  # the reference logits are float32
        lengths = [int(x) for x in args.eval_lengths.split(",")]
        arrays, dev_acc = {}, {}
        for L in lengths:
            logits = predict(core, evals, torch, device, args.max_tokens * 2, L, pad_id)
            width = max(len(z) for z in logits)
            arr = np.full((len(evals), width), np.nan, dtype=np.float32)
            for i, z in enumerate(logits):
                arr[i, : len(z)] = z
            arrays[f"logits{L}"] = arr
            dev_acc[L] = accuracy([it for it in evals if it.role == "dev"],
                                  [z for it, z in zip(evals, logits) if it.role == "dev"])
        np.savez_compressed(out / "logits_eval.npz", ids=np.array([it.rid for it in evals]),
                            formats=np.array([it.fmt for it in evals]), keys=np.array([it.key for it in evals]),
                            roles=np.array([it.role for it in evals]), **arrays)
        from models.training.one_sequence_reader import save

        save(core, out / "model", {"teacher_layers": layers, "max_length": max(lengths)})
        result = {"run": out.name, "layers": core.encoder.config.num_hidden_layers, "teacher_layers": layers,
                  "parameters": sum(p.numel() for p in core.parameters()), "dev_accuracy": dev_acc,
                  "steps": steps, "epochs": round(steps / max(per_epoch, 1), 3), "questions_seen": seen,
                  "tokens_seen": tokens, "train_s": round(train_s, 1), "tokens_per_s": round(tokens / max(train_s, 1e-9)),
                  "gpus": dist_.world if cuda else 0,
                  "gpu_name": torch.cuda.get_device_name(0) if cuda else None, "history": history,
                  "losses": [x for x in losses if x is not None][-40:],
                  "settings": {k: getattr(args, k) for k in ("lr", "alpha", "temperature", "max_tokens", "max_questions",
                                                             "short_share", "short_length", "seed", "schedule_seconds",
                                                             "epochs")},
                  "torch": torch.__version__, "wall_s": round(time.time() - t0, 1)}
        (out / "metrics.json").write_text(json.dumps(result, indent=1))
        print(json.dumps({"run": out.name, "done": True, "dev_accuracy": dev_acc, "epochs": result["epochs"]}),
              flush=True)
    dist_.end()
    return result


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m models.training.distill", description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="models.training.one_sequence_data output (.npz)")
    ap.add_argument("--teacher", required=True, help="models.shipping.teacher output: state.safetensors + config.json")
    ap.add_argument("--teacher-logits", default="", help="models.shipping.ship_predict's logits_race.npz ('' = keys only)")
    ap.add_argument("--init-student", default="", help="go on from a saved student (its model/ folder)")
    ap.add_argument("--layers", type=int, default=0, help="teacher layers kept (0 = all)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--alpha", type=float, default=0.5, help="weight of the teacher's soft labels")
    ap.add_argument("--temperature", type=float, default=2.0)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--schedule-seconds", type=float, default=0.0)
    ap.add_argument("--max-tokens", type=int, default=24576)
    ap.add_argument("--max-questions", type=int, default=256)
    ap.add_argument("--short-share", type=float, default=0.5)
    ap.add_argument("--short-length", type=int, default=384)
    ap.add_argument("--eval-lengths", default="512,384")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--limit", type=int, default=0, help="train on the first N items only (tests)")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
