"""Holds a lock on argv[1] (argv[2]: filelock, flock or lockf; none: no lock): argv[3] "forever" (asleep: it never
releases it), "work:S" (it computes for S seconds, then releases), "work:S:PATH" (it computes until PATH exists,
at most S seconds, then releases), "blocked" (it waits on an event nobody sets), "stopped" (it stops itself), or
"child:HOW" (as `flock FILE cmd` does: it runs this script again with no lock and HOW, and waits for it)."""

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time

from _ready import ready

PATH, KIND, HOW = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "forever"


def hold():
    if KIND == "none":
        return lambda: None
    if KIND == "filelock":
        from filelock import FileLock

        lock = FileLock(PATH)
        lock.acquire()
        return lock.release
    fd = os.open(PATH, os.O_RDWR | os.O_CREAT, 0o644)
    if KIND == "flock":
        fcntl.flock(fd, fcntl.LOCK_EX)
    else:
        fcntl.lockf(fd, fcntl.LOCK_EX)
    return lambda: os.close(fd)


if __name__ == "__main__":
    release = hold()
    ready("holder")
    if HOW.startswith("child:"):
        code = subprocess.call([sys.executable, __file__, PATH, "none", HOW.removeprefix("child:")])
        release()
        print("released, child", code, flush=True)
    elif HOW == "stopped":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif HOW == "forever":
        while True:
            time.sleep(3600)
    elif HOW == "blocked":
        threading.Event().wait()
    else:
        _, limit, *until = HOW.split(":", 2)
        seconds, total, t0 = float(limit), 0, time.monotonic()
        rows = list(range(1000))
        while time.monotonic() - t0 < seconds and not (until and os.path.exists(until[0])):
            for r in rows:
                total += r * r
        release()
        print("released", total % 7, flush=True)
