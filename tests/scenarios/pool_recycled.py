"""Healthy twin of pool_lost.py: pool workers come and go by design (maxtasksperchild=1) while they work on
tasks that take a while; every result arrives."""

import multiprocessing as mp
import time


def tokenize(shard):
    t0, total = time.monotonic(), 0
    while time.monotonic() - t0 < 1.0:
        total += sum(range(1000))
    return shard


if __name__ == "__main__":
    for step in range(10):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    with mp.Pool(2, maxtasksperchild=1) as pool:
        sizes = pool.map(tokenize, range(12), chunksize=1)
    print("done", len(sizes), flush=True)
