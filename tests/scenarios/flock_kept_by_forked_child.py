"""A trainer takes its checkpoint directory's flock, starts a helper process (fork) inside the locked section, and
closes the file: the forked helper keeps a copy of the open file, so the lock stays (zc.lockfile#8), and the next
checkpoint's flock waits on it. `python flock_kept_by_forked_child.py hang`: the helper is an uploader waiting for
jobs the trainer never sends (a cycle: trainer -> flock -> helper -> socket -> trainer). `python
flock_kept_by_forked_child.py twin SECONDS`: the helper compresses the optimizer state for SECONDS and exits, and the
lock is granted: `done`. /proc/locks names the trainer (it took the lock); the helper's fdinfo lists it.
"""

import fcntl
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
import zlib


def uploader(conn):  # a long-lived helper: waits for upload jobs
    while conn.recv() is not None:
        pass


def writer(seconds: float) -> None:  # writes the optimizer state, still under the (inherited) lock
    blob, end = os.urandom(1 << 18), time.monotonic() + seconds
    while time.monotonic() < end:
        zlib.compress(blob, 9)


if __name__ == "__main__":
    print("saving checkpoints under a flock", flush=True)
    ctx = mp.get_context("fork")
    run_dir = tempfile.mkdtemp(prefix="hw-flock-", dir=".")
    lock_path = os.path.join(run_dir, ".ckpt.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if sys.argv[1] == "twin":
            child = ctx.Process(target=writer, args=(float(sys.argv[2]),))
        else:
            parent_end, child_end = ctx.Pipe()
            child = ctx.Process(target=uploader, args=(child_end,), daemon=True)
        child.start()  # inherits the lock's open file
    time.sleep(0.5)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # HANG-HERE
    child.join()
    shutil.rmtree(run_dir, ignore_errors=True)
    print("done", flush=True)
