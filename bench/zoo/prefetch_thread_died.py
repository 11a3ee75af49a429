"""A prefetch thread whose iterator raised: it died without telling the consumer, which waits on its queue.

report: https://github.com/RadarML/red-rover/issues/23
saw: "If the Prefetch iterator raises an exception, the prefetch thread dies without ever notifying the consumer of the exception."
mechanism: the consumer's queue.get() has no timeout; the only thread that could put is gone (its traceback is in the log), so no thread of the process can ever release the wait.
expect: hung code.deadlock
"""
import queue
import threading

from _zoo import ready


def frames(n):
    for i in range(n):
        if i == 3:
            raise OSError(f"radar frame {i}: truncated file")
        yield i


def prefetch(it, q):
    for item in it:
        q.put(item)
    q.put(None)


if __name__ == "__main__":
    q = queue.Queue(maxsize=8)
    threading.Thread(target=prefetch, args=(frames(100), q), daemon=True, name="prefetch").start()
    ready()
    while (item := q.get()) is not None:  # HANG-HERE
        print(f"frame {item}", flush=True)
