"""One rank's slow model initialisation: the other waits in DDP's setup, then both train.

report: https://github.com/facebookresearch/fairscale/issues/959
saw: "it takes almost 20 minutes for the training routine to begin"; training then ran.
mechanism: healthy: rank 0 computes an expensive initialisation while rank 1 waits in DDP's parameter check for it.
expect: healthy
"""
import time

import torch
from _zoo import ready, seconds, two_ranks
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank):
    model = torch.nn.Linear(64, 64)
    if rank == 0:
        ready()
        end = time.time() + seconds(30)
        w = torch.empty(256, 256)
        while time.time() < end:  # orthogonal init of many large matrices
            torch.nn.init.orthogonal_(w)
    ddp = DDP(model)
    for step in range(3):
        ddp(torch.randn(4, 64)).sum().backward()
        print(f"rank {rank} step {step}", flush=True)


if __name__ == "__main__":
    two_ranks(main)
