"""join() a child before get() from its multiprocessing.Queue: the child cannot exit, the parent waits.

report: https://github.com/python/cpython/issues/91594
also: https://github.com/pytorch/translate/pull/285
saw: a program that puts a large result on a Queue and joins the child first hangs forever (exactly at the 64 KiB pipe limit in n8n's case).
mechanism: the child cannot exit until its queue's feeder thread has flushed the data into a 64 KiB pipe; the parent is in join() and never reads.
expect: hung child.wait
accept: code.deadlock
"""
import multiprocessing as mp

from _zoo import ready


def predict(q):
    q.put(b"x" * (1 << 20))  # 1 MiB of predictions


if __name__ == "__main__":
    q = mp.Queue()
    p = mp.Process(target=predict, args=(q,))
    p.start()
    ready()
    p.join()  # HANG-HERE
    print(len(q.get()), flush=True)
