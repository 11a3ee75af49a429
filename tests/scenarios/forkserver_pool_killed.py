"""A multiprocessing.Pool under `forkserver` whose worker is SIGKILLed holding its task: Pool never reports it, and
`pool.map` waits forever. The workers are the forkserver's children, not the caller's."""

import multiprocessing as mp
import os
import signal
import time


def task(i: int) -> int:
    if i == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(1)
    return i


if __name__ == "__main__":
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.3)
    with mp.get_context("forkserver").Pool(2) as pool:
        print(pool.map(task, range(2)), flush=True)  # HANG-HERE
    print("done", flush=True)
