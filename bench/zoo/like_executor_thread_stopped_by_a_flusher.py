"""A listener task in a ThreadPoolExecutor waits for a stop event that a flushing thread sets once its work is done.

report: https://github.com/python/cpython/issues/86128
saw: the shape that works: whatever the exit's join waits for is set by a thread that is alive and working.
mechanism: healthy: the exit joins the listener, which waits on the stop event with no timeout; a non-daemon flusher thread writes out the last metrics for a while (computing) and then sets the event.
expect: healthy
"""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready, seconds

stop = threading.Event()


def listen():
    print("listening for metrics", flush=True)
    stop.wait()
    print("listener stopped", flush=True)


def flush(s):
    deadline, n = time.monotonic() + s, 0
    while time.monotonic() < deadline:
        n += sum(i * i for i in range(20000))  # the last metrics, summarised
    print(f"flushed ({n % 97})", flush=True)
    stop.set()


if __name__ == "__main__":
    executor = ThreadPoolExecutor(max_workers=1)
    executor.submit(listen)
    threading.Thread(target=flush, args=(seconds(30),), name="flusher").start()
    print("training done", flush=True)
    ready()
