"""A multiprocessing Manager's Lock shared by workers; the worker that holds it is killed (an OOM kill) while
holding it, and two others wait for it: each waits for the manager's answer on a local socket."""

import multiprocessing as mp
import os
import signal
import time

from _ready import ready


def holder(lock, ev) -> None:  # type: ignore[no-untyped-def]
    lock.acquire()
    ev.set()
    time.sleep(3600)


def waiter(lock) -> None:  # type: ignore[no-untyped-def]
    with lock:  # HANG-HERE
        print("got it", flush=True)


if __name__ == "__main__":
    manager = mp.Manager()
    lock, ev = manager.Lock(), manager.Event()
    h = mp.Process(target=holder, args=(lock, ev))
    h.start()
    ev.wait(30)
    os.kill(h.pid, signal.SIGKILL)
    h.join(30)
    waiters = [mp.Process(target=waiter, args=(lock,)) for _ in range(2)]
    for w in waiters:
        w.start()
    ready()
    for w in waiters:
        w.join()
