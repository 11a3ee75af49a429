"""A cache's index is guarded by a flock() on a lock file. `python flock_twice.py hang`: the code that saves the
index opens the lock file again and locks it while its caller still holds the lock through its own open: a flock
belongs to the open file, so the second open waits for the first, which the same thread holds. `python flock_twice.py
SECONDS`: the first lock is a background writer's, which writes for SECONDS and then lets it go, and the job ends.
`python flock_twice.py alarm`: the same thread holds it, and the second lock is bounded the usual way, by a SIGALRM
whose handler raises after 8 s: the save is skipped, and the job ends. A second argument `ofd` takes open file
description locks (fcntl F_OFD_SETLKW) instead of flock(): they too belong to the open file, and /proc/locks lists
them with pid -1."""

import fcntl
import os
import signal
import struct
import sys
import tempfile
import threading
import time

LOCK = os.path.join(tempfile.mkdtemp(), "index.lock")
OFD = sys.argv[2:] == ["ofd"]
F_OFD_SETLK, F_OFD_SETLKW = 37, 38  # <linux/fcntl.h> (fcntl.F_OFD_SETLKW where Python's build has it)


# struct flock: type, whence, start, len (0: to the end), pid (0 for an OFD lock)
WHOLE = {how: struct.pack("hhqqi4x", how, 0, 0, 0, 0) for how in (fcntl.F_WRLCK, fcntl.F_UNLCK)}


def lock(f: object, how: int) -> None:
    if OFD:
        mode = fcntl.F_WRLCK if how == fcntl.LOCK_EX else fcntl.F_UNLCK
        fcntl.fcntl(f, F_OFD_SETLKW if how == fcntl.LOCK_EX else F_OFD_SETLK, WHOLE[mode])
    else:
        fcntl.flock(f, how)


def save_index() -> None:
    with open(LOCK, "w") as f:
        fcntl.fcntl(f, F_OFD_SETLKW, WHOLE[fcntl.F_WRLCK]) if OFD else fcntl.flock(f, fcntl.LOCK_EX)  # HANG-HERE
        f.write("index\n")


held = open(LOCK, "w")  # noqa: SIM115 - held until the writer lets it go (or forever)
lock(held, fcntl.LOCK_EX)
if sys.argv[1] == "alarm":

    def timed_out(*_: object) -> None:
        raise TimeoutError("the index lock")

    signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(8)
elif sys.argv[1] != "hang":

    def writer() -> None:
        time.sleep(float(sys.argv[1]))
        lock(held, fcntl.LOCK_UN)

    threading.Thread(target=writer, name="writer").start()
print("saving the index", flush=True)
try:
    save_index()
except TimeoutError as e:
    print("skipped the save:", e, flush=True)
print("done", flush=True)
