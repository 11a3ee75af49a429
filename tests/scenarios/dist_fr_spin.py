"""Two ranks under torchrun (gloo): after a few steps, rank 1 spins in a pure Python loop holding the GIL (a
counter that only counts) while rank 0 waits in the next all_reduce. Torch's worker server (C++) still answers
for rank 1; our handler, which needs the GIL, does not."""

import time

import torch
import torch.distributed as dist
from _ready import ready

import hangwatch


def wait_for_flag(flags):
    n = 0
    # one line: a sample lands on it, whichever part of the loop runs
    while not flags.get("go"): n += 1  # HANG-HERE:spin
    return n


if __name__ == "__main__":
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(256)
    for step in range(3):
        dist.all_reduce(x)
        hangwatch.beat(step)
        time.sleep(0.05)
    ready(f"rank{rank}")
    if rank == 1:
        wait_for_flag({})
    dist.all_reduce(x)  # HANG-HERE:waits
