"""Speed accounting of a training run: FLOPs per token and of attention (for the model FLOPs
utilisation), the steady throughput after the first steps, and the `training` record that
metrics.json and the checkpoint keep."""
from __future__ import annotations

SCHEDULE_PROBE_STEPS = 40  # steps timed before a time-set schedule fixes its length
PEAK_FLOPS = 989e12  # H100 SXM dense bf16 (the reference for model FLOPs utilisation)


def flops_per_token(core) -> float:
    """Training FLOPs per token of the matrix products (6 x weights outside the embeddings)."""
    n = sum(p.numel() for name, p in core.named_parameters() if "embeddings" not in name
            and "relative_attention_bias" not in name)
    return 6.0 * n


def attention_flops(core, items, idx) -> float:
    """Training FLOPs of the attention products of a batch: QK^T and PV, forward and backward."""
    cfg = core.config
    layers = getattr(cfg, "num_hidden_layers", 0)
    hidden = getattr(cfg, "hidden_size", 0)
    return float(sum(12 * layers * hidden * len(s) ** 2 for i in idx for s in items[i].ids))


STEADY_AFTER = 20  # steps left out of the steady throughput (allocation, autotuning)


def training_record(dist_, device, train_s, questions, steps, plan, steps_per_epoch, tokens_real, tokens_padded,
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
