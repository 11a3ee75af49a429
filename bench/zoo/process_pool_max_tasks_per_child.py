"""ProcessPoolExecutor(max_tasks_per_child=2) with a backlog: two tasks run, then the pool has no worker.

report: https://github.com/python/cpython/pull/140900
also: https://github.com/python/cpython/issues/115634
saw: "Prints 0 and 1, then hangs forever." (Python 3.11 to 3.15.0b3)
mechanism: the worker exits at its task limit; a stale idle-worker token makes the manager think a worker is idle, so it starts no replacement; the queued tasks wait for a worker that never comes.
expect: hung child.lost_work
accept: code.deadlock
"""
import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor

from _zoo import ready


def tokenize(i):
    return i * 2


if __name__ == "__main__":
    if sys.version_info < (3, 11):
        sys.exit("needs Python 3.11+ (max_tasks_per_child)")
    with ProcessPoolExecutor(1, max_tasks_per_child=2, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(tokenize, i) for i in range(10)]
        ready()
        print([f.result() for f in futures], flush=True)  # HANG-HERE
