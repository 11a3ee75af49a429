"""Dataset.map(num_proc=N)'s pool (``multiprocess``, the dill fork of multiprocessing): a worker killed mid-task, the map waits forever.

report: https://github.com/huggingface/datasets/pull/5976
also: https://github.com/unslothai/unsloth/pull/7831
saw: "when one of the subprocesses is abruptly killed (OOM killer, segfault, SIGKILL, etc), the main process keeps waiting for the async task sent to that child process to finish"; datasets does `from multiprocess import Pool`.
mechanism: multiprocess.Pool, like multiprocessing.Pool, replaces a dead worker but never re-issues or fails the task it held; the caller waits for a result that never comes.
expect: hung child.lost_work
"""
import os
import signal
import time

import multiprocess as mp
from _zoo import ready


def tokenize(x):
    time.sleep(0.5)  # the work, whose memory grows until...
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # ... the OOM killer ends the worker holding this batch
    return x * x


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        ready()
        print(pool.map(tokenize, range(8)), flush=True)  # HANG-HERE
