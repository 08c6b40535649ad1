"""The reader as training uses it: built from `models.training.mc_model` with PyTorch's fused attention,
its forward with the option mask, `predict` (split over the ranks under torchrun) and the
accuracy per format."""
from __future__ import annotations

import contextlib
import random
from types import MethodType

from tqdm import tqdm

from models.training.encoding import batches, prefetched


def load_model(backbone: str, torch, seed: int, pooling: str = "cls"):
    """The seed's architecture from `models.training.mc_model` (exportable with fused attention)."""
    from models.training.mc_model import build

    return use_fused_attention(build(backbone, seed=seed, pooling=pooling), torch)


def use_fused_attention(model, torch):
    """Train with PyTorch's fused attention kernel instead of the explicit softmax(QK^T) graph.

    The same computation (additive mask, scaled dot product, attention dropout) without
    materialising [seqs, heads, T, T] tensors for the backward pass: several runs then
    fit on one GPU.  Only the training-time forward changes; the module (and so the
    weights and the exported graph) stays the classic one `models.export.onnx_export` expects.
    """
    from models.training.mc_model import BertSelfAttention

    def forward(self, x, additive_mask):
        q, k, v = self._heads(self.query(x)), self._heads(self.key(x)), self._heads(self.value(x))
        ctx = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=additive_mask.to(q.dtype),
            dropout_p=self.dropout.p if self.training else 0.0)
        ctx = ctx.permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), self.num_heads * self.head_size)

    for m in model.modules():
        if isinstance(m, BertSelfAttention):
            m.forward = MethodType(forward, m)
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
        it = tqdm(it, total=len(bl), desc="predict", leave=False)
    with torch.no_grad():
        for idx, (ids, types, mask, opt_mask, _) in it:
            with autocast(torch, device, bf16):
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


def autocast(torch, device, bf16=True):
    if bf16 and str(device).startswith("cuda"):
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def accuracy_by_format(items, logits) -> dict:
    res: dict[str, list[int]] = {}
    for it, lg in zip(items, logits):
        if it.key is None:
            continue
        res.setdefault(it.fmt, []).append(int(max(range(len(lg)), key=lg.__getitem__) == it.key))
    return {f: sum(v) / len(v) for f, v in res.items()}
