"""One training run (`run_one`): a fold of the cross-fitting or the final model, from its records
to its predictions, metrics.json and (the final run) the checkpoint; and which records each
run trains on, is scored on and predicts (`split_for_run`, `assign_folds`).  `models.training.train`
drives the runs."""
from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from tqdm import tqdm

from models.training import checkpoint
from models.training.distributed import Dist, weights_digest
from models.training.encoding import batches, encode_all, load_tokenizer, prefetched
from models.training.train_model import accuracy_by_format, autocast, forward, load_model, predict
from models.training.train_speed import (PEAK_FLOPS, SCHEDULE_PROBE_STEPS, STEADY_AFTER, attention_flops,
                                         flops_per_token, training_record)


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
    from models.training.encoded_cache import encoded_for_run  # inside: numpy stays out of `mcqlens`'s start-up

    train_items, dev_items, held_items = encoded_for_run(args, tok, train, dev, held, formats, eval_formats)
    log = {"fold": fold, "n_train": len(train), "n_dev": len(dev), "n_held": len(held), "encode_s": round(time.time() - t0, 1)}
    if dist_.main:
        print(json.dumps({"run": out_dir.name, "encoded": len(train_items), "encode_s": log["encode_s"]}), flush=True)

    core = load_model(args.backbone, torch, args.seed, args.pooling)
    if getattr(args, "init_from", ""):  # go on from a saved run (models.training.checkpoint), a new schedule
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
    params_flops = flops_per_token(core)

    best, best_state, history, bad, best_dev_logits = -1.0, None, [], 0, None
    train_s, trained_questions, steps_done, stop_now = 0.0, 0, 0, False
    tokens_real, tokens_padded = 0, 0
    t_train0, steady = None, None
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
            with autocast(torch, device):
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
            ep_flops += params_flops * n_real + attention_flops(core, train_items, idx)
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
            out = {"training": training_record(dist_, device, train_s, trained_questions, steps_done, plan,
                                                steps_per_epoch, tokens_real, tokens_padded, steady, torch)}
            (out_dir / "metrics.json").write_text(json.dumps(out, indent=1))
            print(json.dumps({"run": out_dir.name, **out}), flush=True)
        dist_.end()
        return {}
    core.load_state_dict(best_state)
    model = core
    training = training_record(dist_, device, train_s, trained_questions, steps_done, plan, steps_per_epoch,
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
