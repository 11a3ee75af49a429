"""Ranks under torchrun (gloo) whose collectives go out of step, and hang collectives later at a line where
nothing is wrong. argv[1]: the last rank skips the warm-up all_reduce of step 0 ("skip"), or calls one
all_reduce more at step 0 ("extra"); gloo pairs all_reduces of one size by number whatever their line, so the
pairs run one off until the barrier of step 3 meets an all_reduce; or has one batch fewer ("uneven"): it
reaches the final barrier while the others are in their last step's all_reduce; or ("skipnext") skips a
barrier inside an `if` at step 3 right before the barrier every rank calls: its barrier completes the others'
first one, and the hang comes at the very next call (their second barrier, its all_reduce). The healthy twins: every rank takes the same
branch ("same"), or rank 0 alone calls a collective on a group only it is in ("solo")."""

import sys

import torch
import torch.distributed as dist
from _ready import ready

import hangwatch


def train(rank, world, mode):
    t = torch.ones(4)
    last = rank == world - 1
    solo = dist.new_group([0]) if mode == "solo" else None  # every rank makes the group; only rank 0 is in it
    for step in range(4 if mode == "uneven" and last else 5):
        if step == 0 and not (mode == "skip" and last):
            dist.all_reduce(t)  # HANG-HERE:warmup
        if step == 3 and mode == "skipnext" and not last:
            dist.barrier()  # HANG-HERE:skipped
        if step == 3:
            dist.barrier()  # HANG-HERE:barrier
        dist.all_reduce(t)  # HANG-HERE:reduce
        if step == 0 and mode == "extra" and last:
            dist.all_reduce(t)  # HANG-HERE:extra
        if solo is not None and rank == 0:
            dist.all_reduce(torch.ones(2), group=solo)  # a group of one: completes at once
        if step == 2:
            ready(f"rank{rank}")
        hangwatch.beat(step)
    dist.barrier()  # HANG-HERE:final
    print(f"rank {rank} done", flush=True)


if __name__ == "__main__":
    dist.init_process_group("gloo")
    train(dist.get_rank(), dist.get_world_size(), sys.argv[1])
    dist.destroy_process_group()
