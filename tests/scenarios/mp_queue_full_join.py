"""A child puts three results into a multiprocessing Queue(maxsize=1) that the parent reads only after joining it:
the child's second put waits for room the parent would make, the parent's join for the child's end. `python
mp_queue_full_join.py hang`; `python mp_queue_full_join.py SECONDS`: the parent reads the results after SECONDS,
then joins, and the job ends."""

import multiprocessing as mp
import sys
import time


def child(q) -> None:
    for i in range(3):
        q.put(i)  # the child waits here for room


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue(maxsize=1)
    p = ctx.Process(target=child, args=(q,))
    p.start()
    if sys.argv[1] != "hang":
        time.sleep(float(sys.argv[1]))
        print([q.get() for _ in range(3)], flush=True)
    # a cycle through the parent, named at its join, where it is mended (get, then join)
    p.join()  # HANG-HERE
    print("done", flush=True)
