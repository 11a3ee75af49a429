"""A fork Pool with maxtasksperchild=1 whose workers return tensors: each worker exits right after sending
its result, the parent's result handler cannot fetch the tensor's storage from it, and exits; Pool.map waits
forever (pytorch/pytorch#135705). HW_RETURN=numpy returns arrays instead, each task taking 2 s: the same pool
that works (its twin)."""

import os
import time

import torch
from _ready import ready
from torch.multiprocessing import get_context

NUMPY = os.environ.get("HW_RETURN") == "numpy"


def work(i):
    if NUMPY:
        time.sleep(2)
        return torch.randn(1).numpy()
    return torch.randn(1)


if __name__ == "__main__":
    with get_context("fork").Pool(1, maxtasksperchild=1) as pool:
        ready()
        print(len(pool.map(work, range(30), chunksize=1)), flush=True)  # HANG-HERE
