"""A `spawn` Pool with maxtasksperchild=1 (each worker retires after one task and the pool replaces it) running
`imap` over a source that takes 12 s for its third item: meanwhile every worker is idle, main waits for the next
result, and the pool's task handler runs the source. Healthy: exit 0."""

import multiprocessing as mp
import time


def source():
    for i in range(4):
        if i == 2:
            time.sleep(12)  # a slow read, a download
        yield i


def square(i: int) -> int:
    return i * i


if __name__ == "__main__":
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.3)
    with mp.get_context("spawn").Pool(2, maxtasksperchild=1) as pool:
        for r in pool.imap(square, source()):
            print(f"result {r}", flush=True)
    print("done", flush=True)
