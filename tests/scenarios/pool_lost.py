"""multiprocessing.Pool.map where one pool worker is SIGKILLed while it holds a task (what the OOM
killer does): the pool starts a replacement, but the dead worker's result never comes, and
Pool.map waits forever."""

import multiprocessing as mp
import os
import signal
import time

from _ready import ready


def tokenize(shard):
    if shard == int(os.environ.get("HW_VICTIM", "10")):  # 10: ~1 s in; 0: at once, before hangwatch's first look
        ready("victim")
        os.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does to a worker mid-task
    time.sleep(0.2)
    return shard * shard


if __name__ == "__main__":
    with mp.Pool(2) as pool:
        sizes = pool.map(tokenize, range(16), chunksize=1)  # HANG-HERE
    print("done", sum(sizes), flush=True)
