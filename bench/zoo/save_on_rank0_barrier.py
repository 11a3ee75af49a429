"""A checkpoint save with a barrier inside, called on rank 0 only: the ranks wait in different collectives.

report: https://github.com/allenai/allennlp/pull/4693
also: https://github.com/deepspeedai/DeepSpeed/issues/797
saw: training with DeepSpeed hung after checkpointing; the trainer saved only on the master, and save_checkpoint calls dist.barrier().
mechanism: rank 0 waits in the barrier inside save_checkpoint; rank 1 has gone on to the next all_reduce.
expect: hung distributed.peer_stuck
"""
import os
import tempfile

import torch
import torch.distributed as dist
from _zoo import ready, two_ranks


def save_checkpoint(state):
    torch.save(state, os.path.join(tempfile.gettempdir(), f"zoo-ckpt-{os.getpid()}.pt"))
    dist.barrier()  # HANG-HERE (every rank must reach this, as DeepSpeed's engine does)


def main(rank):
    w = torch.randn(16)
    for step in range(4):
        t = w.clone()
        dist.all_reduce(t)
        print(f"rank {rank} step {step}", flush=True)
        if step == 1:
            ready()
            if rank == 0:
                save_checkpoint({"w": w})
    mem = torch.tensor([float(step)])
    dist.all_reduce(mem)  # HANG-HERE


if __name__ == "__main__":
    two_ranks(main)
