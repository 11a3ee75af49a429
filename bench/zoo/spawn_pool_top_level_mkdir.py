"""A spawn Pool's workers import the main script again before they take a task, and its top level makes the output
directory with os.mkdir: the main process made it, so each worker raises FileExistsError and dies as it starts; the
pool replaces it for ever, and map() never returns.

report: https://github.com/esa/pygmo2/issues/142
also: https://github.com/albertfgu/diffwave-sashimi/issues/8
saw: each worker's traceback, `File "...runa_n.py", line 13, in <module> os.mkdir(path)` then "FileExistsError: ... Cannot create a file when that file already exists", again and again
mechanism: spawn (and forkserver) run the script's top level in every worker (as __mp_main__); the pool's call is guarded, the directory's creation is not. Each replacement dies at the same line, and the output never stops.
expect: hung child.wait
output: file
"""
import multiprocessing as mp
import os
import tempfile
import time

from _zoo import ready

RUN = os.environ.setdefault("ZOO_MKDIR_RUN", tempfile.mkdtemp(prefix="zoo-mkdir-"))
OUT = os.path.join(RUN, "1runANN_f")
os.mkdir(OUT)  # the main process makes it; each worker that imports this script again cannot


def evaluate(seed):
    time.sleep(1.0)  # one training run
    return seed % 3


if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:
        ready()
        print(sum(pool.map(evaluate, range(6))), flush=True)  # HANG-HERE
