"""A trainer takes its checkpoint directory's flock, starts an uploader process inside the locked section, and
"releases" the lock by closing the file: the forked uploader still holds it, and the next checkpoint's flock waits
for ever.

report: https://github.com/zopefoundation/zc.lockfile/pull/8
also: https://github.com/asmvik/skhd/issues/83
saw: "unlocking and locking didn't work when a multiprocessing process was running ... The fix was to make an explicit flock unlock call, in addition to closing the file"
mechanism: a flock belongs to the open file, not to a process: fork copies the fd into the child, so closing the parent's copy does not release it. /proc/locks still names the trainer (it took the lock); the uploader's fdinfo lists it. The uploader waits for jobs on a pipe from the trainer, which waits for the lock: a cycle.
expect: hung io.lock_wait
accept: process.waits_on
"""
import fcntl
import multiprocessing as mp
import os
import tempfile
import time

from _zoo import ready


def uploader(conn):  # a long-lived helper: waits for upload jobs
    while conn.recv() is not None:
        pass


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    run_dir = tempfile.mkdtemp(prefix="zoo-flock-")
    lock_path = os.path.join(run_dir, ".ckpt.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(os.path.join(run_dir, "step_100.pt"), "wb") as f:
            f.write(os.urandom(4096))
        parent_end, child_end = ctx.Pipe()
        ctx.Process(target=uploader, args=(child_end,), name="uploader", daemon=True).start()  # inherits the lock
    time.sleep(0.5)
    ready()
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # HANG-HERE
        print("step 200 saved", flush=True)
