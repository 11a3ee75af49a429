"""A Pool that retires each worker after one task (maxtasksperchild=1), with slow tasks: every worker is a late
replacement, and every task completes.

report: https://github.com/python/cpython/pull/101081
saw: a lost task needs a worker that died holding it; replaced workers alone are normal with maxtasksperchild.
mechanism: healthy: each worker runs one slow task (sleeping in pieces) and exits, the pool starts a new one; map returns.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds

TASKS = 8


def decode(args):
    i, s = args
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:
        time.sleep(0.5)
    return i


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2, maxtasksperchild=1) as pool:
        ready()
        print(pool.map(decode, [(i, seconds(40) * 2 / TASKS) for i in range(TASKS)], chunksize=1), flush=True)
