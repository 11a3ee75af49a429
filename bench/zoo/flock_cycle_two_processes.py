"""Two processes each lock one cache file, then wait for the other's: both wait forever.

report: https://github.com/openSUSE/open-build-service/issues/1606
also: https://github.com/NixOS/nix/pull/7521
saw: two processes "were flock'ing ... and just hang"; a maintainer: a deadlock needs processes that lock several files in a cycle.
mechanism: flock(2) detects no deadlock; the trainer holds index.lock and waits for shards.lock, its prefetcher holds shards.lock and waits for index.lock.
expect: hung code.deadlock
accept: io.lock_wait
"""
import fcntl
import multiprocessing as mp
import os
import tempfile

from _zoo import ready


def hold_then_take(first, second, both_hold):
    with open(first, "w") as a:
        fcntl.flock(a, fcntl.LOCK_EX)
        both_hold.wait()
        with open(second, "w") as b:
            fcntl.flock(b, fcntl.LOCK_EX)  # HANG-HERE
            print("never", flush=True)


if __name__ == "__main__":
    d = tempfile.mkdtemp()
    index, shards = os.path.join(d, "index.lock"), os.path.join(d, "shards.lock")
    ctx = mp.get_context("fork")
    both_hold = ctx.Barrier(2)
    prefetcher = ctx.Process(target=hold_then_take, args=(shards, index, both_hold))
    prefetcher.start()
    ready()
    hold_then_take(index, shards, both_hold)
