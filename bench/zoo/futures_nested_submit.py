"""A ThreadPoolExecutor task that submits to its own one-worker executor and waits: neither ever finishes.

report: https://github.com/python/cpython/issues/141617
saw: the docs' own example: "This will never complete because there is only one worker thread and it is executing this function."
mechanism: the outer task holds the only worker while it waits for the inner task's future; the inner task sits in the queue behind it. Every thread waits on a futex with no timeout.
expect: hung code.deadlock
"""
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready

executor = ThreadPoolExecutor(max_workers=1)


def load_shard(i):
    return list(range(i))


def prepare(i):
    shard = executor.submit(load_shard, i)
    ready()
    return len(shard.result())  # HANG-HERE


if __name__ == "__main__":
    print(executor.submit(prepare, 3).result(), flush=True)
