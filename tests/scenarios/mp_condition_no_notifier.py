"""The parent waits on a multiprocessing Condition for a flag the child was to set and notify: the child raises
first. `python mp_condition_no_notifier.py hang`; `python mp_condition_no_notifier.py SECONDS`: the child works
SECONDS, then sets the flag and notifies, and the job ends."""

import multiprocessing as mp
import sys
import time


def child(cond, flag, arg: str) -> None:
    if arg == "hang":
        raise RuntimeError("bad config")  # dies before it notifies
    time.sleep(float(arg))
    with cond:
        flag.value = 1
        cond.notify_all()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    cond, flag = ctx.Condition(), ctx.Value("i", 0)
    p = ctx.Process(target=child, args=(cond, flag, sys.argv[1]))
    p.start()
    with cond:
        while not flag.value:
            cond.wait()  # HANG-HERE
    p.join()
    print("done", flush=True)
