"""Every rank calls the barrier, from a branch of its own, while rank 0 computes first: slow, not skewed.

report: https://github.com/huggingface/diffusers/issues/2606
also: https://github.com/huggingface/transformers/pull/1081
saw: (the report's fix) every rank reaches the checkpoint's barrier, rank 0 after writing the checkpoint; the wait looks like the report's hang.
mechanism: healthy: the same collective from two lines pairs by number; rank 0 computes for a while before its barrier, the others wait in theirs, then all go on.
expect: healthy
"""
import time

import torch
import torch.distributed as dist
from _zoo import ready, seconds, two_ranks

WORLD = 4


def main(rank):
    t = torch.ones(4)
    for step in range(4):
        dist.all_reduce(t)
        if step == 2:
            ready()
            if rank == 0:
                end, w = time.monotonic() + seconds(30), torch.randn(64, 64)
                while time.monotonic() < end:  # writes the checkpoint: a loop that walks its work
                    w = torch.tanh(w @ w.T / 64)
                dist.barrier()
            else:
                dist.barrier()
    print(f"rank {rank} done", flush=True)


if __name__ == "__main__":
    two_ranks(main, world=WORLD)
