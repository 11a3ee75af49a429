"""Three ranks under torchrun (gloo): after a few steps, rank 0 alone calls a barrier in `if rank == 0:` (a
checkpoint's sync) while ranks 1 and 2 go on to the next step's all_reduce: no collective ever matches."""

import time

import torch
import torch.distributed as dist
from _ready import ready

import hangwatch


def save_checkpoint(rank):
    if rank == 0:
        ready(f"rank{rank}")
        dist.barrier()  # HANG-HERE:odd


def train():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(1024)
    for step in range(100):
        dist.all_reduce(x)  # HANG-HERE:others
        hangwatch.beat(step)
        time.sleep(0.05)
        if step == 5:
            save_checkpoint(rank)
            if rank != 0:
                ready(f"rank{rank}")


if __name__ == "__main__":
    train()
