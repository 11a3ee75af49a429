"""One rank raises in validation and cannot exit (a non-daemon thread); the other waits in its collective.

report: https://github.com/Lightning-AI/pytorch-lightning/issues/8130
saw: one DDP process raised in validation_step; its traceback was printed, but the job never terminated.
mechanism: the peers are not told that a rank failed; they wait in the next collective. The failed rank stays alive at exit, joining a logger thread that never ends (with NCCL it would simply exit).
expect: hung distributed.peer_stuck
accept: code.deadlock
"""
import threading

import torch
import torch.distributed as dist
from _zoo import ready, two_ranks


def uploader():
    threading.Event().wait()  # HANG-HERE


def main(rank):
    threading.Thread(target=uploader, name="metrics-uploader").start()  # non-daemon
    for step in range(5):
        if rank == 1 and step == 3:
            ready()
            raise ValueError("validation_step: shapes do not match")
        t = torch.ones(4)
        dist.all_reduce(t)
        print(f"rank {rank} step {step}", flush=True)


if __name__ == "__main__":
    two_ranks(main)
