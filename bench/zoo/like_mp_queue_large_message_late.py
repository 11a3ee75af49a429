"""A consumer polls a Queue with get(timeout=1.0) while a worker computes a large result, then sends it.

report: https://github.com/birdnet-team/birdnet/issues/83
saw: get() with a timeout, in a loop: the consumer wakes every second while the worker works.
mechanism: healthy: the worker computes for a while and then puts a 32 MiB message; the consumer's get() reads it whole.
expect: healthy
"""
import multiprocessing as mp
import queue
import time

from _zoo import ready, seconds


def worker(q, s):
    deadline, n = time.monotonic() + s, 0
    while time.monotonic() < deadline:
        n += sum(i * i for i in range(20000))  # the embeddings, computed
    q.put(bytes(32 << 20))
    q.put(None)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    w = ctx.Process(target=worker, args=(q, seconds(30)), name="worker-0")
    w.start()
    ready()
    while True:
        try:
            item = q.get(timeout=1.0)
        except queue.Empty:
            continue
        if item is None:
            break
        print(f"got {len(item)} bytes", flush=True)
    w.join()
