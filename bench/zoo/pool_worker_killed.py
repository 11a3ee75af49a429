"""A multiprocessing.Pool worker killed mid-task (the OOM killer): Pool.map waits forever.

report: https://github.com/python/cpython/issues/96062
also: https://github.com/mapillary/OpenSfM/issues/190
saw: an OOM-killed pool worker: "the process never terminates", at 0 % CPU.
mechanism: multiprocessing.Pool replaces a dead worker but never re-issues or fails the task it held; the caller waits for a result that never comes.
expect: hung child.lost_work
"""
import multiprocessing as mp
import os
import signal
import time

from _zoo import ready


def extract_features(x):
    time.sleep(0.5)  # the work, whose memory grows until...
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # ... the OOM killer ends the worker holding this task
    return x * x


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        ready()
        print(pool.map(extract_features, range(8)), flush=True)  # HANG-HERE
