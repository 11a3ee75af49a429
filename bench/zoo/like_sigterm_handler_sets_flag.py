"""A SIGTERM handler that only sets a flag; the main loop sees it, drains for a while, and exits.

report: https://github.com/python/cpython/issues/126434
saw: the safe form: a handler that does as little as possible and touches no lock.
mechanism: healthy: the handler sets a plain flag; main, waiting on the event with a timeout, sees it and saves its state slowly before it exits.
expect: healthy
"""
import multiprocessing as mp
import os
import signal
import threading
import time

from _zoo import ready, seconds

stop = mp.get_context("fork").Event()
flags = {"preempted": False}


def on_sigterm(signum, frame):
    flags["preempted"] = True


def preempt():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    threading.Event().wait(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    threading.Thread(target=preempt).start()
    while not flags["preempted"]:
        stop.wait(0.5)
    print("preempted: draining", flush=True)
    ready()
    time.sleep(seconds(20))  # saving the state
    print("stopped cleanly", flush=True)
