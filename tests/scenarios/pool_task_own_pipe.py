"""A ProcessPoolExecutor's task reads a pipe it made itself and holds the write end of: nobody else can write or close
it, so the read never ends. `python pool_task_own_pipe.py hang`; `python pool_task_own_pipe.py SECONDS`: the task
computes for SECONDS instead, and the job ends."""

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor


def task(arg):
    if arg == "hang":
        r, _w = os.pipe()
        os.read(r, 1)  # HANG-HERE
    end, n = time.time() + float(arg), 0
    while time.time() < end:
        n += 1
    return n


if __name__ == "__main__":
    with ProcessPoolExecutor(1) as ex:
        print("result", ex.submit(task, sys.argv[1]).result() > 0, flush=True)
    print("done", flush=True)
