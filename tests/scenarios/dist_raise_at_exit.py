"""Two ranks under torchrun (gloo): rank 1 raises at step 3 but cannot exit, because a non-daemon thread of
its own waits on an event nobody sets; rank 0 waits in the next all_reduce. The culprit is rank 1, at its
thread's line, not at threading.py where its main thread joins that thread. argv[1] "exit": no such thread, so
rank 1 exits and rank 0's all_reduce fails ("Connection closed by peer"): a crash, caused by rank 1's error."""

import sys
import threading
import time

import torch
import torch.distributed as dist
from _ready import ready

import hangwatch


def uploader():
    threading.Event().wait()  # HANG-HERE


def train():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if sys.argv[1:] != ["exit"]:
        threading.Thread(target=uploader, name="metrics-uploader").start()  # not a daemon
    x = torch.ones(256)
    for step in range(100):
        if rank == 1 and step == 3:
            ready(f"rank{rank}")
            raise ValueError("validation_step: shapes do not match")  # HANG-HERE:raised
        dist.all_reduce(x)  # HANG-HERE:others
        hangwatch.beat(step)
        time.sleep(0.05)
        if rank == 0 and step == 3:
            ready(f"rank{rank}")


if __name__ == "__main__":
    train()
