"""The same spawned consumer, handed the parent's queue as an argument: it waits while the producer prepares.

report: https://github.com/CodeMouse92/DeadSimplePython/issues/6
saw: passing the queue to the process shares it; the consumer's get() ends when the producer puts.
mechanism: healthy: the producer (the parent) prepares its items for a while (asleep in pieces), then puts them and
the sentinel; the consumer reads them and exits; the parent's join ends.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def consumer(q):
    while True:
        item = q.get()
        if item is None:
            break


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    worker = ctx.Process(target=consumer, args=(q,), name="consumer")
    worker.start()
    ready()
    end = time.monotonic() + seconds(40)
    while time.monotonic() < end:  # preparing the items
        time.sleep(0.5)
    for n in range(10):
        q.put(n)
    q.put(None)
    worker.join()
    print("done", flush=True)
