"""load_dataset waits for a cache lock another process holds: it hangs silently.

report: https://github.com/huggingface/datasets/issues/329
also: https://github.com/huggingface/datasets/issues/1672
saw: with cache_dir on a shared filesystem, load_dataset "hangs indefinitely"; `with FileLock(path)` alone hangs.
mechanism: datasets' FileLock polls every 50 ms with timeout=-1; while another process holds the flock (or the filesystem refuses it) it never succeeds and logs nothing.
expect: hung io.lock_wait
"""
import os
import subprocess
import sys
import tempfile
import time

from _zoo import ready
from filelock import FileLock

if __name__ == "__main__":
    lock_path = os.path.join(tempfile.gettempdir(), f"zoo-cache-{os.getpid()}.lock")
    # another job's preprocessing holds the cache lock and is itself stuck
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR); "
        "fcntl.flock(fd, fcntl.LOCK_EX); time.sleep(10**9)"), lock_path])
    time.sleep(1.0)
    print("loading the dataset cache", flush=True)
    ready()
    with FileLock(lock_path):  # HANG-HERE
        print("cache ready", flush=True)
