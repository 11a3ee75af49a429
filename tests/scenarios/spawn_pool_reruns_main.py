"""A spawn Pool's workers import the main script again (as __mp_main__) before they take a task; where its top level
fails there, each worker dies as it starts, the pool replaces it with one that dies the same way, and map() never
returns (kernc/backtesting.py#1256: "the same error which repeats itself every time").

`python spawn_pool_reruns_main.py unguarded`: the pool is started at the top level, with no `if __name__ ==
"__main__":` guard: Python refuses, in each worker, to start a process while the script is imported ("... before the
current process has finished its bootstrapping phase"). `python spawn_pool_reruns_main.py mkdir`: the guard is there,
but the top level makes the output directory with os.mkdir: the main process made it, each worker's import raises
FileExistsError. `python spawn_pool_reruns_main.py twin`: makedirs(exist_ok=True), the guard, workers retired after each
task (maxtasksperchild=1, so they come and go too), each task 1.5 s: the job ends with `done`. `... threadpool` and
`... spawn`: the guarded script's pool is a ThreadPool, or a spawn Pool, whose tasks take 15 s, after `ready` (for a
look while its log still holds an earlier run's refusal).
"""

import multiprocessing as mp
import os
import sys
import tempfile
import time

MODE = sys.argv[1]
BASE = os.environ.get("SPAWN_SCENARIO_DIR") or os.environ.setdefault("SPAWN_SCENARIO_DIR", tempfile.mkdtemp(dir="."))
OUT = os.path.join(BASE, "scores")
if MODE == "mkdir":
    os.mkdir(OUT)  # the main process makes it; each worker that imports this script again cannot
else:
    os.makedirs(OUT, exist_ok=True)


def score(cfg: int) -> int:
    time.sleep(1.5)
    return cfg * 37 % 11


def search() -> None:
    with mp.get_context("spawn").Pool(2, maxtasksperchild=1) as pool:
        best = max(pool.map(score, range(6), chunksize=1))  # HANG-HERE
    print("best", best, flush=True)


def slow(cfg: int) -> int:
    time.sleep(15.0)
    return cfg


def long_search() -> None:
    from multiprocessing.pool import ThreadPool

    from _ready import ready

    with ThreadPool(2) if MODE == "threadpool" else mp.get_context("spawn").Pool(2) as pool:
        ready()
        print("best", max(pool.map(slow, range(2))), flush=True)


if MODE == "unguarded":
    search()  # no __main__ guard: each worker reaches this line again
elif MODE in ("threadpool", "spawn") and __name__ == "__main__":
    long_search()
elif __name__ == "__main__":
    search()
    os.rmdir(OUT)
    os.rmdir(BASE)
    print("done", flush=True)
