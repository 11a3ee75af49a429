"""huggingface_hub's download lock held by another process: "Still waiting to acquire lock" forever.

report: https://github.com/noonghunna/club-3090/issues/726
also: https://github.com/huggingface/huggingface_hub/issues/2399
saw: "Still waiting to acquire lock on .../model.safetensors.lock (elapsed: 10.0 seconds)" forever, on three retries.
mechanism: the hub's WeakFileLock retries forever with no overall timeout while another process (an earlier, wedged attempt) holds the lock.
expect: hung io.lock_wait
"""
import os
import subprocess
import sys
import tempfile
import time

from _zoo import ready
from huggingface_hub.utils import WeakFileLock

if __name__ == "__main__":
    lock_path = os.path.join(tempfile.gettempdir(), f"zoo-weak-{os.getpid()}.lock")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR); "
        "fcntl.flock(fd, fcntl.LOCK_EX); time.sleep(10**9)"), lock_path])
    time.sleep(1.0)
    print("fetching model.safetensors", flush=True)
    ready()
    with WeakFileLock(lock_path):  # HANG-HERE
        print("fetched", flush=True)
