"""A SIGTERM handler that sets the multiprocessing Event its own thread waits on: the preempted job never stops.

report: https://github.com/python/cpython/issues/126434
also: https://github.com/getsentry/taskbroker/pull/764
saw: "multiprocessing.Event.set() can deadlock when called from a signal handler"; the pod waits out its grace period and is SIGKILLed.
mechanism: the handler runs on the main thread inside Event.wait(); set() calls notify_all(), which waits for each sleeper (this very thread) to acknowledge on a semaphore only it could release.
expect: hung code.deadlock
"""
import multiprocessing as mp
import os
import signal
import threading

from _zoo import ready

stop = mp.get_context("fork").Event()


def on_sigterm(signum, frame):
    print("preempted: draining", flush=True)
    ready()
    stop.set()  # HANG-HERE


def preempt():  # the scheduler's SIGTERM, delivered to the main thread
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    threading.Event().wait(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    threading.Thread(target=preempt).start()
    stop.wait()  # HANG-HERE
    print("stopped cleanly", flush=True)
