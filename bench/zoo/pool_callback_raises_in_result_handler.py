"""A Pool callback raises on the first result: the pool's result-handler thread dies and every get() waits for ever.

report: https://github.com/python/cpython/issues/83371
saw: "multiprocessing.Pool hangs if a callback raises": the results come back, nobody collects them.
mechanism: apply_async callbacks run in the pool's result-handler thread; an exception there ends that thread, so no later result is ever set, and AsyncResult.get() waits on an Event nobody can set.
expect: hung child.lost_work
accept: process.waits_on
"""
import multiprocessing as mp

from _zoo import ready

best = {}


def score(ckpt):
    return ckpt, 1.0 / (1 + ckpt)


def keep_best(result):  # runs in the pool's result-handler thread
    ckpt, s = result
    if s > best.get("score"):  # TypeError (float > None) on the first result: the thread dies
        best.update(ckpt=ckpt, score=s)


if __name__ == "__main__":
    with mp.Pool(2) as pool:
        jobs = [pool.apply_async(score, (c,), callback=keep_best) for c in range(8)]
        ready()
        for j in jobs:
            j.get()  # HANG-HERE
    print("best checkpoint:", best, flush=True)
