"""A pipeline's producer waits on a full bounded queue while its consumer thread works through each record slowly.

report: https://github.com/cgarciae/pypeln/issues/110
saw: the healthy shape: put() blocks only as long as the consumer lives and takes.
mechanism: healthy: Queue(maxsize=4).put() has no timeout, but the consumer thread is alive and takes a record every half second or so (each one a timed wait on a slow service), so the producer moves, slowly.
expect: healthy
"""
import queue
import threading
import time

from _zoo import ready, seconds


def stage(q, per):
    while (x := q.get()) is not None:
        time.sleep(per)  # a slow service, one record at a time
        print(f"record {x}", flush=True)


if __name__ == "__main__":
    n = 20
    q = queue.Queue(maxsize=4)
    t = threading.Thread(target=stage, args=(q, seconds(30) / n), name="stage")
    t.start()
    ready()
    for x in range(n):
        q.put(x)
    q.put(None)
    t.join()
