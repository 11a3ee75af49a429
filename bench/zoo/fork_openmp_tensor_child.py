"""A torch op in the parent, then the same op in a forked child: the child never returns.

report: https://github.com/pytorch/pytorch/issues/89693
also: https://github.com/pytorch/pytorch/issues/41197
saw: tensor.float() hangs in a multiprocessing child, only when the parent already ran it and only for large tensors.
mechanism: the parent's parallel region started GNU OpenMP's thread pool; fork copies the pool's bookkeeping but not its threads, so the child's first parallel region waits forever for threads that do not exist.
expect: hung fork.inherited_lock
"""
import multiprocessing as mp

import numpy as np
import torch
from _zoo import ready


def preprocess():
    return torch.from_numpy(np.random.randn(64**3)).float()  # HANG-HERE


def child():
    ready()
    preprocess()


if __name__ == "__main__":
    preprocess()
    print("parent preprocessed; forking a child", flush=True)
    p = mp.get_context("fork").Process(target=child)
    p.start()
    p.join()
