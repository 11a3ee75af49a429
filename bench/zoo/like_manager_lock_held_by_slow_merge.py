"""The same Manager lock, held by a worker whose merge takes a while, and ends.

report: https://github.com/HKUDS/LightRAG/pull/3413
saw: the wait ends when the holder releases; the hang needs the holder dead.
mechanism: healthy: the holder, alive, sleeps in pieces while it holds the lock (an LLM call), then releases it.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def merge(lock, held, s):
    with lock:
        held.set()
        deadline = time.monotonic() + s
        while time.monotonic() < deadline:
            time.sleep(0.5)


if __name__ == "__main__":
    with mp.Manager() as manager:
        lock, held = manager.Lock(), manager.Event()
        worker = mp.Process(target=merge, args=(lock, held, seconds(60)))
        worker.start()
        held.wait()
        ready()
        with lock:
            print("merged the next entity", flush=True)
        worker.join()
