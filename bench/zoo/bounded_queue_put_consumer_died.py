"""A pipeline's producer blocks on a full bounded queue: the only consumer thread raised and is gone.

report: https://github.com/cgarciae/pypeln/issues/110
also: https://github.com/python/cpython/issues/77259
saw: "all process workers exits successfully. But the initial worker thread which feed the input numbers into queue stuck on the block call of ... put".
mechanism: Queue(maxsize=4).put() with no timeout waits for a free slot; the one thread that takes from the queue died on an exception (its traceback is in the log), so no thread can ever make room.
expect: hung code.deadlock
"""
import queue
import threading

from _zoo import ready


def stage(q):
    while True:
        x = q.get()
        if x == 10:
            raise AssertionError(f"record {x}: bad value")
        print(f"record {x}", flush=True)


if __name__ == "__main__":
    q = queue.Queue(maxsize=4)
    threading.Thread(target=stage, args=(q,), daemon=True, name="stage").start()
    for x in range(100):
        if x == 15:
            ready()  # the stage died at 10; 11-14 fill the queue
        q.put(x)  # HANG-HERE
