"""A preexec_fn takes a node-wide flock another process holds for a while: the child waits, gets it, execs.

report: https://github.com/intel/gprofiler/issues/931
saw: the safe form: a lock in preexec_fn whose holder is alive and releases it.
mechanism: healthy: the forked child waits in flock() while another process of the job holds the lock file (asleep in pieces); it releases it, the child execs git and the parent reads its output.
expect: healthy
"""
import fcntl
import multiprocessing as mp
import os
import subprocess
import tempfile
import time

from _zoo import ready, seconds

LOCK = os.path.join(tempfile.mkdtemp(), "encoder-slot.lock")


def other_job(held, s):  # another job on the node holds the encoder slot for a while
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    held.set()
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:
        time.sleep(0.5)


def take_slot():  # preexec_fn: one encoder per node; the child keeps the flock across exec
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)


if __name__ == "__main__":
    held = mp.get_context("fork").Event()
    p = mp.get_context("fork").Process(target=other_job, args=(held, seconds(12)))
    p.start()
    held.wait()
    ready()
    out = subprocess.run(["git", "--version"], capture_output=True, text=True, preexec_fn=take_slot).stdout
    print("code version:", out, flush=True)
    p.join()
