"""Two ranks started with torch.multiprocessing.spawn (gloo); rank 1 is stuck in a user function."""

import os
import threading

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from _ready import ready


def preprocess_shard(rank):
    if rank == 1:
        ready(f"rank{rank}")
        threading.Event().wait()  # HANG-HERE
    return torch.ones(2)


def worker(rank, world, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    x = preprocess_shard(rank)
    if rank == 0:
        ready(f"rank{rank}")
    dist.all_reduce(x)


if __name__ == "__main__":
    mp.spawn(worker, args=(2, int(os.environ["HW_PORT"])), nprocs=2)
