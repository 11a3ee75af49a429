"""Two processes lock the same two cache files in the same order: one waits while the other works, then goes on.

report: https://github.com/openSUSE/open-build-service/issues/1606
saw: a maintainer: with one order, "at least one process gets the lock".
mechanism: healthy: both take index.lock then shards.lock; the prefetcher holds both while it writes for a while, then the trainer gets them.
expect: healthy
"""
import fcntl
import multiprocessing as mp
import os
import tempfile
import time

from _zoo import ready, seconds


def take_both(index, shards, work_s, started=None):
    with open(index, "w") as a:
        fcntl.flock(a, fcntl.LOCK_EX)
        if started is not None:
            started.set()
        with open(shards, "w") as b:
            fcntl.flock(b, fcntl.LOCK_EX)
            time.sleep(work_s)  # writing the shard index


if __name__ == "__main__":
    d = tempfile.mkdtemp()
    index, shards = os.path.join(d, "index.lock"), os.path.join(d, "shards.lock")
    ctx = mp.get_context("fork")
    started = ctx.Event()
    prefetcher = ctx.Process(target=take_both, args=(index, shards, seconds(20), started))
    prefetcher.start()
    started.wait(30)
    ready()
    take_both(index, shards, 0.1)
    prefetcher.join()
    print("both done", flush=True)
