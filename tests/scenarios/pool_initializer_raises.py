"""A fork Pool's initializer that raises ends the worker before it takes a task; the pool starts another, which runs
it again, for ever, and map() never returns (CPython gh-87472, "Error in multiprocessing.Pool's initializer doesn't
stop execution"): the output fills with the same traceback, hundreds a second.

`python pool_initializer_raises.py hang`: the initializer raises RuntimeError in every worker.
`python pool_initializer_raises.py twin`: it raises the same error for its first four runs (a file a run, in a
temporary directory), then passes; workers are retired after each task (maxtasksperchild=1: they come and go too),
each task 1.5 s: the job ends with `done`, its output holding those four tracebacks.
"""

import multiprocessing as mp
import os
import sys
import tempfile
import time

MODE = sys.argv[1]
RUNS = tempfile.mkdtemp(prefix="hw-pool-init-")


def open_shard() -> None:
    n = len(os.listdir(RUNS))
    with open(os.path.join(RUNS, f"run{os.getpid()}"), "w"):
        pass
    if MODE == "hang" or n < 4:
        raise RuntimeError("cannot open the dataset shard")


def score(cfg: int) -> int:
    time.sleep(1.5)
    return cfg * 37 % 11


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2, initializer=open_shard, maxtasksperchild=1) as pool:
        best = max(pool.map(score, range(6), chunksize=1))  # HANG-HERE
    print("best", best, flush=True)
    for name in os.listdir(RUNS):
        os.unlink(os.path.join(RUNS, name))
    os.rmdir(RUNS)
    print("done", flush=True)
