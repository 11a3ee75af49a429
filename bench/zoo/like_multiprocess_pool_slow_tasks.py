"""Dataset.map(num_proc=N)'s pool (``multiprocess``) on slow batches: the map waits while every worker computes.

report: https://github.com/huggingface/datasets/issues/2243
saw: "Map is slow and processes batches one after another": a map that looks stuck while its workers work.
mechanism: healthy: each task computes for a while (the workers' CPU time grows); the map returns and the job exits 0.
expect: healthy
"""
import time

import multiprocess as mp
from _zoo import ready, seconds

PER_TASK = seconds(40) / 2


def tokenize(x):
    end = time.monotonic() + PER_TASK
    while time.monotonic() < end:
        sum(range(10000))
    return x * x


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        ready()
        print(pool.map(tokenize, range(4)), flush=True)
