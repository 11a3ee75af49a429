"""A parent waits in Listener.accept() for a worker process that crashed before it connected.

report: https://github.com/python/cpython/issues/76425
also: https://github.com/python/cpython/issues/83933
saw: accept() "blocks indefinitely" and takes no timeout; "multiprocessing halts when child process crashes/quits".
mechanism: accept() on the listening socket has no timeout; the one process that was to connect raised before it did (its traceback is in the log) and is a zombie the parent never reaped; nothing else knows the address.
expect: hung process.waits_on
accept: io.network_wait, child.wait, child.lost_work, unknown
"""
import multiprocessing as mp
from multiprocessing.connection import Client, Listener

from _zoo import ready


def worker(address):
    raise RuntimeError("worker: cannot load shard 3")
    Client(address).send("ready")  # not reached


if __name__ == "__main__":
    with Listener(("127.0.0.1", 0)) as listener:
        p = mp.get_context("fork").Process(target=worker, args=(listener.address,), name="loader")
        p.start()
        ready()
        conn = listener.accept()  # HANG-HERE
        print(conn.recv(), flush=True)
