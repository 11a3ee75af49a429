"""Pool callbacks keep the best checkpoint while slow scores come in: every get() returns.

report: https://github.com/python/cpython/issues/83371
saw: the working form: a callback that cannot raise.
mechanism: healthy: main waits in get() while two pool workers score checkpoints (asleep in pieces); the result-handler thread runs each callback and sets each result.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds

best = {"score": -1.0}


def score(ckpt, s):
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:  # evaluate a checkpoint (asleep in pieces)
        time.sleep(0.5)
    return ckpt, 1.0 / (1 + ckpt)


def keep_best(result):
    ckpt, s = result
    if s > best["score"]:
        best.update(ckpt=ckpt, score=s)


if __name__ == "__main__":
    with mp.Pool(2) as pool:
        jobs = [pool.apply_async(score, (c, seconds(12) / 4), callback=keep_best) for c in range(8)]
        ready()
        for j in jobs:
            j.get()
    print("best checkpoint:", best, flush=True)
