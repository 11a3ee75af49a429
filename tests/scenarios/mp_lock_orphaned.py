"""A child process takes a multiprocessing lock and dies before it releases it (killed, as the OOM killer
does); the main process then waits for that lock forever: a lock never learns that its holder died."""

import multiprocessing as mp
import os
import signal
import time

from _ready import ready


def refresh_cache(lock):
    lock.acquire()
    os.kill(os.getpid(), signal.SIGKILL)  # dies holding it


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    cache_lock = ctx.Lock()
    for step in range(30):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    helper = ctx.Process(target=refresh_cache, args=(cache_lock,))
    helper.start()
    helper.join()
    ready()
    with cache_lock:  # HANG-HERE
        print("cache refreshed", flush=True)
