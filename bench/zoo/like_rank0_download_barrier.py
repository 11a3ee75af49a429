"""Rank 0 downloads the weights before a barrier while rank 1 waits in it: healthy, just slow.

report: https://github.com/mosaicml/composer/pull/2071
also: https://github.com/NVIDIA/nccl/issues/708
saw: non-zero ranks hit the barrier timeout while local rank 0 downloaded a monolithic checkpoint.
mechanism: healthy: rank 0's bytes move (64 KiB at a time) while rank 1 waits at the barrier; then both train.
expect: healthy
"""
import os
import shutil
import tempfile
import urllib.request

import torch
import torch.distributed as dist
from _zoo import ready, seconds, trickle_server, two_ranks


def main(rank):
    if rank == 0:
        port = trickle_server(total=4 << 20, chunk=64 << 10, every_s=seconds(30) / 64)
        path = os.path.join(tempfile.gettempdir(), f"zoo-weights-{os.getpid()}.bin")
        print("rank 0 downloading weights", flush=True)
        ready()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/w.bin", timeout=30) as r, open(path, "wb") as f:
            shutil.copyfileobj(r, f)
        os.unlink(path)
    dist.barrier()
    for step in range(3):
        t = torch.ones(2)
        dist.all_reduce(t)
        print(f"rank {rank} step {step}", flush=True)


if __name__ == "__main__":
    two_ranks(main)
