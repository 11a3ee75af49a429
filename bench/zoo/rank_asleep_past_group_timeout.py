"""One rank sleeps ten hours while loading a shard; the other waits in all_reduce.

report: https://github.com/EleutherAI/bergson/pull/444
also: https://github.com/pytorch/pytorch/issues/118369
saw: "Watchdog caught collective operation timeout" right after a phase only rank 0 runs, while every other rank waited in all_reduce.
mechanism: one rank's phase outlasts the process group's timeout (torch's default: 30 min on gloo) and any --max-slow; a ten-hour sleep stands in for it, so the outcome is known at the first look, from the kernel's timer, with or without the recorder.
expect: hung distributed.peer_stuck
"""
import time

import torch
import torch.distributed as dist
from _zoo import ready, two_ranks


def load_shard(rank):
    if rank == 1:
        time.sleep(36000)  # HANG-HERE
    return torch.ones(4)


def main(rank):
    ready()
    t = load_shard(rank)
    dist.all_reduce(t)


if __name__ == "__main__":
    two_ranks(main)
