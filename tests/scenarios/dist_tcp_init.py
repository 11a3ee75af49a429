"""A plain `python train.py` that joins a 2-rank group through tcp:// with an explicit rank (no
torchrun, no RANK in the environment). argv[1]: rank, argv[2]: port. Rank 1 may never start."""

import sys

import torch
import torch.distributed as dist

rank, port = int(sys.argv[1]), int(sys.argv[2])
print(f"rank {rank} joining", flush=True)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)  # HANG-HERE
x = torch.ones(1)
for step in range(5):
    dist.all_reduce(x)
    print(f"step {step}", flush=True)
dist.destroy_process_group()
