"""Workers share a Manager's lock; one is SIGKILLed while it holds it, and the next acquire waits for ever.

report: https://github.com/HKUDS/LightRAG/pull/3413
also: https://github.com/python/cpython/issues/88304
saw: "a manager.Lock() — an ownerless, liveness-blind mutex living in the Manager process. If the worker holding it is SIGKILLed, the Manager never notices: the lock stays locked forever and every other worker's acquire() deadlocks."
mechanism: the Manager's server runs each client's requests in a thread of its own; the dead worker's lock is a threading.Lock in the server that only another request's release() could free, and no process of the job will send one.
expect: hung process.waits_on
"""
import multiprocessing as mp
import os
import signal

from _zoo import ready


def merge(lock, held):
    lock.acquire()  # an entity's lock, held for the whole merge
    held.set()
    signal.pause()  # the merge (an LLM call): killed here by the OOM killer


if __name__ == "__main__":
    with mp.Manager() as manager:
        lock, held = manager.Lock(), manager.Event()
        worker = mp.Process(target=merge, args=(lock, held))
        worker.start()
        held.wait()
        os.kill(worker.pid, signal.SIGKILL)
        worker.join()
        print(f"merge worker ended ({worker.exitcode}); merging the next entity", flush=True)
        ready()
        with lock:  # HANG-HERE
            print("never", flush=True)
