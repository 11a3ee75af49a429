"""Ranks started by torch.multiprocessing.start_processes (gloo, no RANK in their environment), numbered by the
index it passes. argv[1] "pipeline": three stages; stage 0 receives the loss from stage 1, not from the last stage
(a two-stage config left over; ADIOS2#3344's wrong source): 0 <- 1 <- 2 <- 0 each wait. argv[1] "roots": two ranks
broadcast the vocabulary each from its own "local rank 0" (cugraph#3655). argv[2] "twin SECONDS": the right peer or
root, and the rank that sends computes for SECONDS first. $HW_PORT: the store's port."""

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from _ready import ready


def compute(seconds: float) -> None:
    end, w = time.monotonic() + seconds, torch.randn(64, 64)
    while time.monotonic() < end:
        w = torch.tanh(w @ w.T / 64)


def pipeline(rank: int, twin: bool, seconds: float) -> None:
    if rank == 0:
        dist.send(torch.ones(8), dst=1)
        loss = torch.empty(1)
        ready("rank0")
        dist.recv(loss, src=2 if twin else 1)  # HANG-HERE:pipeline
    elif rank == 1:
        h = torch.empty(8)
        dist.recv(h, src=0)
        dist.send(h * 2, dst=2)
        dist.recv(torch.empty(8), src=2)
    else:
        h = torch.empty(8)
        dist.recv(h, src=1)
        compute(seconds if twin else 0)
        dist.send(h.sum().reshape(1), dst=0)
        dist.send(h, dst=1)


def roots(rank: int, twin: bool, seconds: float) -> None:
    root = 0 if twin else rank  # the bug: each rank is "device 0" of its own node
    vocab = torch.arange(16)
    if rank == root:
        compute(seconds if twin else 0)
    ready(f"rank{rank}")
    dist.broadcast(vocab, src=root)  # HANG-HERE:roots


def gathers(rank: int, twin: bool, seconds: float) -> None:
    """Always healthy: a gather to each rank in turn, rank 2 computing first; ranks 0 and 1 wait meanwhile in
    gathers to different roots (rank 1 already one call ahead), which look alike without a sequence number."""
    if rank == 2:
        compute(seconds)
    ready(f"rank{rank}")
    for root in range(3):
        t = torch.full((4,), float(rank))
        dist.gather(t, [torch.empty(4) for _ in range(3)] if rank == root else None, dst=root)


def worker(rank: int, world: int, port: int, shape: str, twin: bool, seconds: float) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    {"pipeline": pipeline, "roots": roots, "gathers": gathers}[shape](rank, twin, seconds)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    shape, twin = sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "twin"
    seconds = float(sys.argv[3]) if twin else 0.0
    world = 2 if shape == "roots" else 3
    args = (world, int(os.environ["HW_PORT"]), shape, twin, seconds)
    mp.start_processes(worker, args=args, nprocs=world, start_method="fork")
    print("done", flush=True)
