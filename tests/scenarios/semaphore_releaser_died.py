"""The main thread acquires a threading.Semaphore(0) that a loader thread releases once ready: the loader raises and
dies first. `python semaphore_releaser_died.py hang`; `python semaphore_releaser_died.py SECONDS`: the loader works
SECONDS, then releases it, and the job ends."""

import sys
import threading
import time

ready = threading.Semaphore(0)


def loader(arg: str) -> None:
    if arg == "hang":
        raise RuntimeError("bad shard")  # dies before it releases
    time.sleep(float(arg))
    ready.release()


threading.Thread(target=loader, args=(sys.argv[1],), name="loader").start()
ready.acquire()  # HANG-HERE
print("done", flush=True)
