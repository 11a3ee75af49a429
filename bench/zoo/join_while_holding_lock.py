"""Stopping a live display joins its refresh thread while holding the lock that thread needs.

report: https://github.com/Textualize/rich/issues/927
also: https://github.com/tqdm/tqdm/issues/469
saw: "Deadlock when exiting Status context" (maintainer-confirmed, fixed in rich 9.8.2).
mechanism: Live.stop() holds _lock and joins the refresh thread, which is waiting for _lock: a two-thread cycle.
expect: hung code.deadlock
"""
import threading
import time

from _zoo import ready

lock = threading.RLock()
stopping = threading.Event()


def refresh():
    while not stopping.wait(0.05):
        with lock:  # HANG-HERE (a refresh caught inside the loop)
            pass
    with lock:  # HANG-HERE (the last refresh)
        pass


if __name__ == "__main__":
    t = threading.Thread(target=refresh, name="refresh")
    t.start()
    time.sleep(0.2)
    ready()
    with lock:
        stopping.set()
        t.join()  # HANG-HERE
