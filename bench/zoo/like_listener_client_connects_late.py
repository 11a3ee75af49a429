"""A parent waits in Listener.accept() for a worker process that loads its shard first and connects late.

report: https://github.com/python/cpython/issues/76425
saw: accept() has no timeout, so a slow worker looks like a hang from the parent's side.
mechanism: healthy: the worker computes for a while (its shard) and then connects; accept() returns.
expect: healthy
"""
import multiprocessing as mp
import time
from multiprocessing.connection import Client, Listener

from _zoo import ready, seconds


def worker(address, s):
    deadline, n = time.monotonic() + s, 0
    while time.monotonic() < deadline:
        n += sum(i * i for i in range(20000))  # loading and checking the shard
    with Client(address) as c:
        c.send(f"ready ({n % 97})")


if __name__ == "__main__":
    with Listener(("127.0.0.1", 0)) as listener:
        p = mp.get_context("fork").Process(target=worker, args=(listener.address, seconds(30)), name="loader")
        p.start()
        ready()
        with listener.accept() as conn:
            print(conn.recv(), flush=True)
        p.join()
