"""The same ProcessPoolExecutor without max_tasks_per_child: one worker runs slow tasks, and the backlog drains.

report: https://github.com/python/cpython/pull/140900
saw: without max_tasks_per_child the worker is never retired and the queued tasks run.
mechanism: healthy: the caller waits on a future while the one worker sleeps through each slow task; every task completes.
expect: healthy
"""
import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor

from _zoo import ready, seconds

TASKS = 8


def tokenize(i, s):
    time.sleep(s)
    return i * 2


if __name__ == "__main__":
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(tokenize, i, seconds(40) / TASKS) for i in range(TASKS)]
        ready()
        print([f.result() for f in futures], flush=True)
