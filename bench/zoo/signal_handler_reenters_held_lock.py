"""A second SIGTERM arrives while the first one's shutdown holds a non-reentrant lock; the nested handler takes it again.

report: https://github.com/sabnzbd/sabnzbd/pull/3534
also: https://github.com/python/cpython/issues/121649
saw: the process deadlocked on shutdown and had to be SIGKILLed; py-spy showed halt() twice on the main thread.
mechanism: signal handlers run on the main thread inside whatever it runs; the nested halt() waits for INIT_LOCK, held by
the interrupted halt() beneath it on the same thread, which can never resume.
expect: hung code.deadlock
"""
import os
import signal
import threading
import time

from _zoo import ready

INIT_LOCK = threading.Lock()
stopping = {"done": False}


def halt():
    with INIT_LOCK:  # HANG-HERE
        os.kill(os.getpid(), signal.SIGUSR1)  # the second signal, while the queue is being saved
        time.sleep(0.05)
        stopping["done"] = True


def sig_handler(signum, frame):
    if not stopping["done"]:
        halt()


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, sig_handler)
    for i in range(20):
        print(f"downloaded {i}", flush=True)
        time.sleep(0.05)
    ready()
    halt()
