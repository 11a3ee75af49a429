"""The parent waits on a multiprocessing.Queue whose only producer died before putting anything.

report: https://github.com/python/cpython/issues/87971
saw: "multiprocessing.Queue hangs when process on other side dies" (open since 2021).
mechanism: q.get() reads the queue's pipe; the parent created the queue and holds its write end itself, so the producer's death closes nothing: the read never ends.
expect: hung process.waits_on
accept: child.wait
"""
import multiprocessing as mp

from _zoo import ready


def producer(q):
    raise RuntimeError("could not open shard-0042.bin")  # before q.put(...)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    ctx.Process(target=producer, args=(q,)).start()
    ready()
    batch = q.get()  # HANG-HERE
    print(batch, flush=True)
