"""The same fork Pool with maxtasksperchild=1, its workers returning numpy arrays: slow, and it completes.

report: https://github.com/pytorch/pytorch/issues/135705
saw: "returning numpy arrays worked" with the same pool that hung when its workers returned tensors.
mechanism: healthy: an array travels inside the pickled result, so the parent's result handler needs nothing from the worker that has exited; each task takes a few seconds and map returns.
expect: healthy
"""
import time

import torch
from _zoo import ready, seconds
from torch.multiprocessing import get_context

TASK_S = 3.0


def work(i):
    time.sleep(TASK_S)
    return torch.randn(1).numpy()


if __name__ == "__main__":
    with get_context("fork").Pool(1, maxtasksperchild=1) as pool:
        ready()
        print(len(pool.map(work, range(int(seconds(40) / TASK_S)), chunksize=1)), flush=True)
