"""A multiprocessing Barrier for three parties that only two processes reach: the parent and one child. `python
mp_barrier_short.py hang`; `python mp_barrier_short.py SECONDS`: a third process reaches it after SECONDS, and the
job ends."""

import multiprocessing as mp
import sys
import time


def party(barrier, delay: float) -> None:
    time.sleep(delay)
    barrier.wait()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(3)
    ps = [ctx.Process(target=party, args=(barrier, 0.0))]
    if sys.argv[1] != "hang":
        ps.append(ctx.Process(target=party, args=(barrier, float(sys.argv[1]))))
    for p in ps:
        p.start()
    barrier.wait()  # HANG-HERE
    for p in ps:
        p.join()
    print("done", flush=True)
