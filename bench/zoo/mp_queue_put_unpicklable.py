"""A multiprocessing.Queue's put() returns at once and its feeder thread pickles the item later: an item that cannot
be pickled is printed and dropped, and the process that get()s it waits for ever while the parent joins it.

report: https://github.com/python/cpython/issues/84376
also: https://github.com/dmwm/CRABServer/pull/9026
saw: "the put was failing w/o raising an exception": a task handed to a worker process through a queue never arrived,
and the job hung with only a feeder thread's "TypeError: cannot pickle '_thread.RLock' object" in its log
mechanism: Queue.put appends to a buffer; the feeder thread's dumps() raises, Python prints it and drops the item; the
consumer blocks in get() on the queue's pipe, whose write end only the parent (in join) holds.
expect: hung child.wait
"""
import logging
import multiprocessing as mp

from _zoo import ready


def submit(q):
    task = q.get()
    print("running", task["name"], flush=True)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    worker = ctx.Process(target=submit, args=(q,))
    worker.start()
    q.put({"name": "job-17", "log": logging.getLogger("crab")._cache, "handler": logging.StreamHandler()})
    ready()
    worker.join()  # HANG-HERE
