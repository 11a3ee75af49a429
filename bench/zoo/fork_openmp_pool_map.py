"""Dataset.map(num_proc=2) with a torch function after the parent ran torch: the pool never returns.

report: https://github.com/huggingface/datasets/issues/5094
also: https://github.com/huggingface/datasets/issues/5786
saw: map(num_proc=2) with a function running a torch model: the subprocesses "go into wait mode forever"; num_proc=1 works.
mechanism: datasets forks a pool after the parent ran parallel torch ops and, unlike DataLoader, does not reset the thread count in the children: their first parallel region waits for libgomp threads fork did not copy. (multiprocessing.Pool stands in for datasets' multiprocess pool.)
expect: hung fork.inherited_lock
"""
import multiprocessing as mp

import torch
from _zoo import ready


def embed(i):
    ready()
    return float(torch.randn(64**3, dtype=torch.float64).float().sum()) + i  # HANG-HERE


if __name__ == "__main__":
    embed(0)
    print("mapping with num_proc=2", flush=True)
    with mp.get_context("fork").Pool(2) as pool:
        print(pool.map(embed, range(4)), flush=True)
