"""Two pipeline stages under torchrun (gloo) exchange activations and gradients with point-to-point calls.

argv[1] "cycle": stage 0 runs every forward first, stage 1 one forward then one backward: at micro-batch 1 each
blocks in dist.send to the other, and on gloo a send completes only when the matching receive is posted (the
order of pytorch#172668). "batched": the same schedule, each exchange posted at once with batch_isend_irecv,
and stage 1's backward computes for argv[2] seconds (default 8) while stage 0 waits for it: it completes."""

import sys
import time

import torch
import torch.distributed as dist
from _ready import ready

import hangwatch

MICRO = 3


def stage0_cycle():
    for mb in range(MICRO):
        act = torch.full((4,), float(mb))
        if mb == 1:
            ready("rank0")
        dist.send(act, dst=1)  # HANG-HERE:send0
        hangwatch.beat(mb)
    for _ in range(MICRO):
        dist.recv(torch.empty(4), src=1)


def stage1_cycle():
    for mb in range(MICRO):
        act = torch.empty(4)
        dist.recv(act, src=0)
        if mb == 0:
            ready("rank1")
        dist.send(act * 2, dst=0)  # HANG-HERE:send1
        hangwatch.beat(mb)


def backward(seconds):
    end, w, done = time.monotonic() + seconds, torch.randn(64, 64), 0
    while time.monotonic() < end:  # a loop that walks its work
        w = torch.tanh(w @ w.T / 64)
        done += 1
    return done


def tagged(rank, seconds):
    # "tags": stage 0 sends the labels (tag 1) before the activations (tag 0), stage 1 receives the activations first:
    # a send matches only a receive with its tag, so each waits for the other (diffusion-pipe#409); "tags SECONDS":
    # stage 1 receives in stage 0's order after SECONDS of set-up, and it completes.
    labels, act = torch.zeros(8, dtype=torch.long), torch.zeros(4)
    if rank == 0:
        ready("rank0")
        dist.send(torch.arange(8), dst=1, tag=1)  # HANG-HERE:tag0
        dist.send(torch.ones(4), dst=1, tag=0)
        return
    ready("rank1")
    if seconds:
        time.sleep(seconds)  # loads its weights first
        dist.recv(labels, src=0, tag=1)
    dist.recv(act, src=0, tag=0)  # HANG-HERE:tag1
    if not seconds:
        dist.recv(labels, src=0, tag=1)


def batched(rank, seconds):
    peer = 1 - rank
    for mb in range(MICRO):
        out, got = torch.full((4,), float(mb)), torch.empty(4)
        if rank == 1 and mb == 1:
            backward(seconds)
        if mb == 1:
            ready(f"rank{rank}")
        ops = [dist.P2POp(dist.isend, out, peer), dist.P2POp(dist.irecv, got, peer)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        hangwatch.beat(mb)


if __name__ == "__main__":
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if sys.argv[1] == "cycle":
        stage0_cycle() if rank == 0 else stage1_cycle()
    elif sys.argv[1] == "tags":
        tagged(rank, float(sys.argv[2]) if sys.argv[2:] else 0.0)
    else:
        batched(rank, float(sys.argv[2]) if sys.argv[2:] else 8.0)
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()
