"""Several processes (GPUs) through torch.distributed: this process's place in a torchrun
launch, its share of the batches, rank 0's decisions broadcast, and a digest of the
weights the ranks must end with."""
from __future__ import annotations

import hashlib
import os


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
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().float().cpu().numpy().tobytes())
    return h.hexdigest()
