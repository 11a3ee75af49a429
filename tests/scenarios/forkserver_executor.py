"""A ProcessPoolExecutor under the `forkserver` start method: its workers are the forkserver's children (carrying its
command line), not the caller's, whose own children are multiprocessing's helpers. argv[1]: `12`, each task sleeps
12 s (the job ends, exit 0); `hang`, each task waits on an Event nothing in its worker can set."""

import concurrent.futures as cf
import multiprocessing as mp
import sys
import threading
import time


def task(i: int) -> int:
    if sys.argv[1] == "hang":
        threading.Event().wait()  # HANG-HERE
    time.sleep(float(sys.argv[1]))
    return i


if __name__ == "__main__":
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.3)
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("forkserver")) as ex:
        print(sum(ex.map(task, range(2))), flush=True)
    print("done", flush=True)
