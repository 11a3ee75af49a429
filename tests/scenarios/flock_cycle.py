"""Two processes of the job each lock one cache file, then wait for the other's (open-build-service#1606): flock()
detects no deadlock, so both wait for ever. `python flock_cycle.py hang`. `python flock_cycle.py SECONDS`: the
prefetcher holds its file for SECONDS, lets it go and ends without taking the other, and the job ends."""

import fcntl
import multiprocessing as mp
import os
import sys
import tempfile
import time


def prefetch(index: str, shards: str, both_hold) -> None:
    with open(shards, "w") as b:
        fcntl.flock(b, fcntl.LOCK_EX)
        both_hold.wait()
        if sys.argv[1] != "hang":
            time.sleep(float(sys.argv[1]))
            return
        with open(index, "w") as a:
            fcntl.flock(a, fcntl.LOCK_EX)


if __name__ == "__main__":
    d = tempfile.mkdtemp()
    index, shards = os.path.join(d, "index.lock"), os.path.join(d, "shards.lock")
    ctx = mp.get_context("fork")
    both_hold = ctx.Barrier(2)
    child = ctx.Process(target=prefetch, args=(index, shards, both_hold))
    with open(index, "w") as a:
        fcntl.flock(a, fcntl.LOCK_EX)
        child.start()
        both_hold.wait()
        print("both hold their lock", flush=True)
        with open(shards, "w") as b:
            fcntl.flock(b, fcntl.LOCK_EX)  # HANG-HERE
    child.join()
    print("done", flush=True)
