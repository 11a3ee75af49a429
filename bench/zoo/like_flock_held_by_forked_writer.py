"""The same checkpoint flock, inherited on purpose by a forked writer that compresses the optimizer state under it and
then exits: the next flock waits for it, silent, then is granted.

report: https://github.com/zopefoundation/zc.lockfile/pull/8
saw: a lock kept by a child process until it exits (the behaviour the report describes, here intended)
mechanism: healthy: the lock's holder (through its copy of the open file) works at CPU and exits; the waiter's flock is then granted.
expect: healthy
"""
import fcntl
import multiprocessing as mp
import os
import shutil
import tempfile
import time
import zlib

from _zoo import ready, seconds


def writer(s):  # writes the optimizer state, still under the (inherited) lock
    blob, end = os.urandom(1 << 18), time.monotonic() + s
    while time.monotonic() < end:
        zlib.compress(blob, 9)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    run_dir = tempfile.mkdtemp(prefix="zoo-flock-")
    lock_path = os.path.join(run_dir, ".ckpt.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        child = ctx.Process(target=writer, args=(seconds(30),))
        child.start()  # inherits the lock's open file
    time.sleep(0.5)
    ready()
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
    child.join()
    shutil.rmtree(run_dir, ignore_errors=True)
    print("step 200 saved", flush=True)
