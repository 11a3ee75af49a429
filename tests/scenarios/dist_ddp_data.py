"""Four ranks with DDP (gloo): after a few steps, one rank is stuck loading its data while the other three are
inside loss.backward(), waiting in the reducer's all_reduce: their Python stacks show no collective at all.
argv[1]: the stuck rank (default 2); -1: nobody is stuck (a healthy DDP job)."""

import sys
import threading
import time

import torch
import torch.distributed as dist
from _ready import ready
from torch.nn.parallel import DistributedDataParallel as DDP

STUCK = int(sys.argv[1]) if len(sys.argv) > 1 else 2


def load_batch(rank, step):
    if rank == STUCK and step == 6:
        ready(f"rank{rank}")
        threading.Event().wait()  # HANG-HERE:culprit
    return torch.randn(16, 64)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(40):
        batch = load_batch(rank, step)
        if rank != STUCK and step == 6:
            ready(f"rank{rank}")
        loss = model(batch).pow(2).mean()
        loss.backward()  # HANG-HERE:victims
        opt.step()
        opt.zero_grad()
        time.sleep(0.02)
        if rank == 0:
            print(f"step {step}", flush=True)
    dist.destroy_process_group()
    if rank == 0:
        print("done", flush=True)


if __name__ == "__main__":
    main()
