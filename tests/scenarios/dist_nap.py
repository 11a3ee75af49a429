"""Two ranks under torchrun (gloo): at step 2 rank 1 sleeps argv[1] seconds in one time.sleep() (a cool-down, a
poll interval set in hours by mistake) while rank 0 waits in all_reduce. A sleeping rank does not work: a sleep
longer than the process group's timeout can never be waited out; a short one is only a wait."""

import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from _ready import ready

import hangwatch


def cool_down(seconds):
    time.sleep(seconds)  # HANG-HERE:nap


if __name__ == "__main__":
    dist.init_process_group("gloo", timeout=timedelta(seconds=float(sys.argv[2]) if sys.argv[2:] else 1800))
    rank = dist.get_rank()
    x = torch.ones(4)
    for step in range(6):
        if step == 2:
            ready(f"rank{rank}")
            if rank == 1:
                cool_down(float(sys.argv[1]))
        dist.all_reduce(x)  # HANG-HERE:others
        hangwatch.beat(step)
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()
