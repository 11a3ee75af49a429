"""A fork Pool's initializer that raises ends the worker before it takes a task; the pool starts another, which runs
it again, for ever, and map() never returns (CPython gh-87472, "Error in multiprocessing.Pool's initializer doesn't
stop execution"): the output fills with the same traceback, hundreds a second.

`python pool_initializer_raises.py hang`: the initializer reads its config dict as an object: an AttributeError in
every worker, whatever the job does. `python pool_initializer_raises.py twin`: the initializer opens a file that the
main process writes 8 s after the pool starts: a FileNotFoundError in every worker until then (hundreds of the same
traceback, while looks are taken), then it passes; workers are retired after each task (maxtasksperchild=1: they come
and go too), each task 1.5 s: the job ends with `done`.
"""

import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time

MODE = sys.argv[1]
SHARD = os.path.join(tempfile.gettempdir(), f"hw-pool-init-{os.getpid()}.bin")  # (the twin removes it)


def open_shard(cfg: dict) -> None:
    with open(cfg["path"], "rb"):  # FileNotFoundError until the main process has written it
        pass


def open_shard_at(cfg: dict) -> None:
    with open(cfg.path, "rb"):  # a dict has no attribute path: the same error in every worker
        pass


def score(cfg: int) -> int:
    time.sleep(1.5)
    return cfg * 37 % 11


def write_shard() -> None:
    time.sleep(8.0)
    with open(SHARD, "wb") as f:
        f.write(b"\0" * 64)


if __name__ == "__main__":
    init = open_shard_at if MODE == "hang" else open_shard
    if MODE == "twin":
        threading.Thread(target=write_shard, daemon=True).start()
    with mp.get_context("fork").Pool(2, initializer=init, initargs=({"path": SHARD},), maxtasksperchild=1) as pool:
        best = max(pool.map(score, range(6), chunksize=1))  # HANG-HERE
    print("best", best, flush=True)
    os.unlink(SHARD)
    print("done", flush=True)
