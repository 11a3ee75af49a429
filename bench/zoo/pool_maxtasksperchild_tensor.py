"""A fork Pool with maxtasksperchild=1 whose workers return tensors: map never completes.

report: https://github.com/pytorch/pytorch/issues/135705
saw: every worker printed its result, yet Pool.map hung; returning numpy arrays worked.
mechanism: a tensor's storage travels as a file descriptor the parent must fetch from the sending worker; with maxtasksperchild=1 that worker exits right after its put, the parent's result handler cannot rebuild the tensor, and map waits forever (inferred in the thread, not stated by maintainers).
expect: hung child.lost_work
accept: child.wait, code.deadlock
"""
import torch
from _zoo import ready
from torch.multiprocessing import get_context


def work(i):
    print(f"worker made {i}", flush=True)
    return torch.randn(1)


if __name__ == "__main__":
    with get_context("fork").Pool(1, maxtasksperchild=1) as pool:
        ready()
        print(pool.map(work, range(10), chunksize=1), flush=True)  # HANG-HERE
