"""Main holds a multiprocessing lock and waits on its two children's pipes (connection.wait); each child first takes
that lock. `hang`: nothing of main will release it (a cycle); `twin`: a threading.Timer of main releases it after
600 s (its function runs then: main's process may act). lock_held_beside_a_heartbeat.py: the same with a Timer that
re-arms itself."""

import multiprocessing as mp
import sys
import threading
from multiprocessing.connection import Connection, wait

from _ready import ready


def child(lock: "mp.synchronize.Lock", conn: Connection) -> None:
    with lock:  # CHILD-HERE
        conn.send("result")


def hold_and_wait(release_after: float | None) -> None:
    """Take the lock, start the children that take it first, and wait on their pipes; ``release_after``: a one-shot
    Timer of main releases the lock then."""
    lock = mp.Lock()
    lock.acquire()
    pipes = [mp.Pipe(duplex=False) for _ in range(2)]
    procs = [mp.Process(target=child, args=(lock, w), daemon=True) for _, w in pipes]
    for p in procs:
        p.start()
    if release_after is not None:
        threading.Timer(release_after, lock.release).start()
    ready()
    got = wait([r for r, _ in pipes])  # HANG-HERE
    print("ready", len(got), flush=True)


if __name__ == "__main__":
    hold_and_wait(None if sys.argv[1] == "hang" else 600)
