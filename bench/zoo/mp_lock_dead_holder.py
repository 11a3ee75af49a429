"""A cross-process lock whose holder died: every process that shares it waits forever.

report: https://github.com/tqdm/tqdm/issues/1500
saw: one process exited without cleaning up and another hung trying to acquire tqdm's lock, even with disable=True.
mechanism: tqdm's multiprocessing RLock is a POSIX semaphore; a holder that dies never releases it.
expect: hung code.deadlock
accept: io.lock_wait
"""
import multiprocessing as mp
import os

from _zoo import ready

bar_lock = mp.get_context("fork").RLock()  # what tqdm.set_lock shares between processes


def worker():
    bar_lock.acquire()
    os._exit(1)  # crashes while it draws its bar


if __name__ == "__main__":
    p = mp.get_context("fork").Process(target=worker)
    p.start()
    p.join()
    print(f"worker exited with {p.exitcode}; drawing the main bar", flush=True)
    ready()
    with bar_lock:  # HANG-HERE
        print("never", flush=True)
