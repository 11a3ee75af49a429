"""A pipeline stage waits in dist.recv while the next stage computes its backward: slow, not stuck.

report: https://github.com/pytorch/pytorch/issues/172668
also: https://github.com/pytorch/torchtitan/issues/775
saw: (the report's schedule, fixed) a pipeline that waits at one micro-batch while its last stage computes a long backward looks like the report's hang.
mechanism: healthy: stage 0 waits in dist.recv for a gradient while stage 1 computes (its loop walks its data) before it sends; the exchange then completes and both exit.
expect: healthy
"""
import time

import torch
import torch.distributed as dist
from _zoo import ready, seconds, two_ranks


def main(rank):
    x = torch.full((4,), 1.0)
    if rank == 0:
        dist.send(x, dst=1)
        ready()
        dist.recv(x, src=1)  # waits for stage 1's backward
        print("stage 0 got the gradient", flush=True)
    else:
        dist.recv(x, src=0)
        end, w, done = time.monotonic() + seconds(30), torch.randn(64, 64), 0
        while time.monotonic() < end:  # the backward: a loop that walks its work
            w = torch.tanh(w @ w.T / 64)
            done += 1
        dist.send(x * 2, dst=0)
        print(f"stage 1 sent after {done} steps", flush=True)


if __name__ == "__main__":
    two_ranks(main)
