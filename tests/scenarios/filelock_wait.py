"""Preprocessing waits for a cache lock (`with FileLock(path):`, as Hugging Face datasets does) that
another process holds. argv[1]: the lock's path; argv[2]: "filelock" (the package's polling acquire),
"flock" (a blocking fcntl.flock) or "lockf" (a blocking POSIX lock)."""

import fcntl
import os
import sys
import time

from _ready import ready

PATH = sys.argv[1]
KIND = sys.argv[2] if len(sys.argv) > 2 else "filelock"


def build_cache():
    ready()
    if KIND == "filelock":
        from filelock import FileLock

        with FileLock(PATH):  # HANG-HERE
            return "built"
    fd = os.open(PATH, os.O_RDWR | os.O_CREAT, 0o644)
    if KIND == "flock":
        fcntl.flock(fd, fcntl.LOCK_EX)  # HANG-HERE:flock
    else:
        fcntl.lockf(fd, fcntl.LOCK_EX)  # HANG-HERE:lockf
    os.close(fd)
    return "built"


if __name__ == "__main__":
    for step in range(3):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    print(build_cache(), flush=True)
    for step in range(3, 6):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    print("done", flush=True)
