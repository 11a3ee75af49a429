"""Checkpoints are scored in a multiprocessing Pool, each score recorded by an apply_async callback, which runs in the
pool's result-handler thread. One checkpoint fails to load and its evaluation returns None; the callback indexes it
and raises TypeError, which ends that thread (until Python 3.16): no later result is ever handed over, and get()
waits forever. `python pool_callback_raises.py hang`; `python pool_callback_raises.py SECONDS`: the callback skips a
None score, each evaluation takes SECONDS, and the job ends."""

import multiprocessing as mp
import sys
import time

SECONDS = 1.0 if sys.argv[1] == "hang" else float(sys.argv[1])
scores: dict[int, float] = {}


def evaluate(step: int) -> dict[str, float] | None:
    if step == 100:
        time.sleep(0.5)
        return None  # the checkpoint failed to load; the error was logged and swallowed
    time.sleep(SECONDS)
    return {"step": step, "acc": 0.5 + step / 1000}


def record(result: dict[str, float] | None) -> None:  # runs in the pool's result-handler thread
    if sys.argv[1] != "hang" and result is None:
        return
    scores[int(result["step"])] = result["acc"]  # type: ignore[index]  # RAISES-HERE


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        jobs = [pool.apply_async(evaluate, (step,), callback=record) for step in range(0, 400, 100)]
        for job in jobs:
            job.get()  # HANG-HERE
    print("scores", scores, flush=True)
    print("done", flush=True)
