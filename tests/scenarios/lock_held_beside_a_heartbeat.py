"""Main holds a multiprocessing lock and waits on its two children's pipes; each child first takes that lock. A
threading.Timer of main re-arms itself every 30 s (a heartbeat) and releases nothing: its function starts the next
Timer, so it is no way out of the cycle (lock_released_by_a_timer.py: a Timer that releases the lock once). `twin`:
a one-shot Timer releases the lock after 600 s beside the heartbeat (two Timers, one re-arming chain: one fires once)."""

import multiprocessing as mp
import sys
import threading
from multiprocessing.connection import Connection, wait

from _ready import ready


def child(lock: "mp.synchronize.Lock", conn: Connection) -> None:
    with lock:  # CHILD-HERE
        conn.send("result")


def beat() -> None:
    t = threading.Timer(30, beat)
    t.daemon = True
    t.start()


if __name__ == "__main__":
    lock = mp.Lock()
    lock.acquire()
    pipes = [mp.Pipe(duplex=False) for _ in range(2)]
    procs = [mp.Process(target=child, args=(lock, w), daemon=True) for _, w in pipes]
    for p in procs:
        p.start()
    beat()
    if sys.argv[1:] == ["twin"]:
        threading.Timer(600, lock.release).start()
    ready()
    got = wait([r for r, _ in pipes])  # HANG-HERE
    print("ready", len(got), flush=True)
