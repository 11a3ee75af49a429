"""Two pipeline stages each block in dist.send to the other: neither posts its receive.

report: https://github.com/pytorch/pytorch/issues/172668
also: https://github.com/NVIDIA/Megatron-LM/issues/5100
saw: "both ranks are waiting for the send to finish so that they can receive. But neither of ranks are receiving, so send will never finish."
mechanism: stage 0 runs every forward first (it sends micro-batch 1's activations), stage 1 alternates one forward and one backward (it sends micro-batch 0's gradient); on gloo a send completes only when the matching receive is posted.
expect: hung distributed.peer_stuck
"""
import torch
import torch.distributed as dist
from _zoo import ready, two_ranks

MICRO = 3


def stage0():
    for mb in range(MICRO):  # all forwards first
        act = torch.full((4,), float(mb))
        if mb == 1:
            ready()
        dist.send(act, dst=1)  # HANG-HERE
    for mb in range(MICRO):
        grad = torch.empty(4)
        dist.recv(grad, src=1)


def stage1():
    for mb in range(MICRO):  # one forward, one backward
        act = torch.empty(4)
        dist.recv(act, src=0)
        dist.send(act * 2, dst=0)  # the gradient, before the next activation is received


def main(rank):
    stage0() if rank == 0 else stage1()


if __name__ == "__main__":
    two_ranks(main)
