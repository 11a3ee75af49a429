"""A multi-node job that checkpoints every step; on attempt 1 the rank of the last node gets stuck.

Restarted (attempt 2) every rank resumes from its checkpoint and the job finishes.
"""

import json
import os
import sys
import threading

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
ckpt = os.path.join(sys.argv[1], f"rank{rank}.json")
start = 0
if os.path.exists(ckpt):
    with open(ckpt) as f:
        start = json.load(f)["step"]
    print(f"rank {rank} resumed from step {start}", flush=True)
for step in range(start, 6):
    if step == 3 and rank == world - 1 and os.environ.get("HANGWATCH_ATTEMPT") == "1":
        threading.Event().wait()  # HANG-HERE
    x = torch.ones(2)
    dist.all_reduce(x)
    with open(ckpt, "w") as f:
        json.dump({"step": step + 1}, f)
    print(f"rank {rank} step {step}", flush=True)
print(f"rank {rank} done", flush=True)
