"""The same nested submit with two workers: the outer task waits while the inner one runs, slowly, and ends.

report: https://github.com/python/cpython/issues/141617
saw: the deadlock needs every worker to be waiting; with a free worker the inner task runs.
mechanism: healthy: worker 0 waits for the inner future (a futex with no timeout), worker 1 runs the inner task (a slow load that sleeps), then both return.
expect: healthy
"""
import time
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready, seconds

executor = ThreadPoolExecutor(max_workers=2)


def load_shard(i):
    deadline = time.monotonic() + seconds(40)
    while time.monotonic() < deadline:
        time.sleep(0.5)  # a slow read, in pieces
    return list(range(i))


def prepare(i):
    shard = executor.submit(load_shard, i)
    ready()
    return len(shard.result())


if __name__ == "__main__":
    print(executor.submit(prepare, 3).result(), flush=True)
