"""Three ranks under torchrun: rank 2 took a different branch and calls barrier() while ranks 0 and
1 call all_reduce(): the collectives never match."""

import torch
import torch.distributed as dist
from _ready import ready


def sync_metrics(rank, t):
    if rank == 2:
        ready(f"rank{rank}")
        dist.barrier()  # HANG-HERE:odd
    else:
        ready(f"rank{rank}")
        dist.all_reduce(t)  # HANG-HERE:others


if __name__ == "__main__":
    dist.init_process_group("gloo")
    sync_metrics(dist.get_rank(), torch.ones(1))
