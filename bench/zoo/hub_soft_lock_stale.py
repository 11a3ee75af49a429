"""A stale soft lock file left by an interrupted download: every later download waits forever.

report: https://github.com/huggingface/huggingface_hub/issues/2543
also: https://github.com/noonghunna/club-3090/issues/726
saw: "still waiting to acquire lock on .../.locks/models--.../<sha>.lock" forever; an earlier interrupted attempt left the lock orphaned.
mechanism: on filesystems without flock the hub falls back to SoftFileLock, where the lock is the file's existence; a holder that crashed leaves the file, and download locks wait with no timeout.
expect: hung io.lock_wait
"""
import os
import tempfile

from _zoo import ready
from filelock import SoftFileLock

if __name__ == "__main__":
    lock_path = os.path.join(tempfile.gettempdir(), f"zoo-hub-{os.getpid()}.lock")
    open(lock_path, "w").close()  # the orphan an interrupted download left behind
    print(f"downloading model.safetensors (lock {lock_path})", flush=True)
    ready()
    with SoftFileLock(lock_path):  # HANG-HERE
        print("downloaded", flush=True)
