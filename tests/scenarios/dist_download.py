"""Two ranks (gloo, under torchrun): the standard pattern `if rank == 0: download_weights(); dist.barrier()`.
Rank 0 writes a file for argv[1] seconds (64 KiB every 0.2 s; -1: never ends) while rank 1 waits at the
barrier; then both train. argv[2]: "start" (before the first step) or "mid" (after 40 steps, like a
checkpoint download between epochs)."""

import os
import sys
import time

import torch
import torch.distributed as dist
from _ready import ready

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 90.0
WHEN = sys.argv[2] if len(sys.argv) > 2 else "start"


def download_weights(path):
    chunk, t0 = os.urandom(64 * 1024), time.monotonic()
    with open(path, "wb") as f:
        while SECONDS < 0 or time.monotonic() - t0 < SECONDS:
            f.write(chunk)  # HANG-HERE
            f.flush()
            time.sleep(0.2)


def steps(rank, first, last):
    for step in range(first, last):
        x = torch.ones(4)
        dist.all_reduce(x)
        time.sleep(0.05)
        if rank == 0:
            print(f"step {step}", flush=True)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    path = os.path.join(os.environ.get("HW_TMP", "."), "weights.bin")
    if WHEN == "mid":
        steps(rank, 0, 40)
    ready(f"rank{rank}")
    if rank == 0:
        download_weights(path)
    dist.barrier()  # HANG-HERE:victim
    steps(rank, 40 if WHEN == "mid" else 0, 60 if WHEN == "mid" else 20)
    if rank == 0:
        print("done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
