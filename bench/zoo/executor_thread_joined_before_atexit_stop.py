"""A listener task in a ThreadPoolExecutor waits for a stop event that an atexit handler sets: the exit joins it first.

report: https://github.com/python/cpython/issues/86128
also: https://github.com/python/cpython/pull/94008
saw: "even if it looks like you added an `atexit` handler to instruct your thread to exit gracefully, it will only be executed _after_ your thread has finished. For long-running threads ... that may never happen at all".
mechanism: concurrent.futures joins its worker threads at interpreter exit, before the atexit handlers run; the listener waits on the stop event with no timeout, and the only code that would set it is an atexit handler that runs after the join.
expect: hung code.deadlock
"""
import atexit
import threading
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready

stop = threading.Event()
atexit.register(stop.set)  # too late: the executor's threads are joined before atexit handlers run


def listen():
    print("listening for metrics", flush=True)
    stop.wait()  # HANG-HERE
    print("listener stopped", flush=True)


if __name__ == "__main__":
    executor = ThreadPoolExecutor(max_workers=1)
    executor.submit(listen)
    print("training done", flush=True)
    ready()  # main returns: the exit joins the listener
