"""The same queue with a producer that is slow to put its first item, and then does.

report: https://github.com/python/cpython/issues/87971
saw: the queue works while the producer lives; the hang needs it dead.
mechanism: healthy: the parent reads the pipe while the producer, alive, prepares its item (sleeping in pieces), then puts it; the parent's own copy of the write end does not matter.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def producer(q, s):
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:
        time.sleep(0.5)
    q.put("shard-0042.bin")


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    ctx.Process(target=producer, args=(q, seconds(40))).start()
    ready()
    print(q.get(), flush=True)
