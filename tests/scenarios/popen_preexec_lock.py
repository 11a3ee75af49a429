"""A launcher pins its helper to cores in Popen's preexec_fn, under a lock a background thread holds while it
re-reads the topology: preexec_fn runs in the forked child before exec, where that thread does not exist, so the lock
is never released there and Popen() never returns. `python popen_preexec_lock.py hang`; `python popen_preexec_lock.py
SECONDS`: the child's acquire gives up after SECONDS and the helper starts."""

import os
import subprocess
import sys
import threading
import time

TIMEOUT = -1 if sys.argv[1] == "hang" else float(sys.argv[1])
_lock = threading.Lock()
_held = threading.Event()


def refresh_topology() -> None:  # holds the lock while it reads (slow on a busy node)
    while True:
        with _lock:
            _held.set()
            time.sleep(3.0)
        time.sleep(1.0)


def pin_to_cores() -> None:  # runs in the forked child, before exec
    got = _lock.acquire(timeout=TIMEOUT)  # HANG-HERE
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0)))
    if got:
        _lock.release()


threading.Thread(target=refresh_topology, name="topology-refresh", daemon=True).start()
_held.wait()
proc = subprocess.Popen(["true"], preexec_fn=pin_to_cores)  # noqa: PLW1509 - the bug this scenario shows
print("helper exit", proc.wait(), flush=True)
print("done", flush=True)
