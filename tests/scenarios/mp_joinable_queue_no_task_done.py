"""The parent joins a multiprocessing JoinableQueue whose consumer raised before it called task_done().
`python mp_joinable_queue_no_task_done.py hang`; `python mp_joinable_queue_no_task_done.py SECONDS`: the consumer
works SECONDS, then marks each item done, and the job ends."""

import multiprocessing as mp
import sys
import time


def consumer(q, arg: str) -> None:
    if arg != "hang":
        time.sleep(float(arg))
    for _ in range(3):
        q.get()
        if arg == "hang":
            raise RuntimeError("bad item")  # dies before its task_done()
        q.task_done()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.JoinableQueue()
    p = ctx.Process(target=consumer, args=(q, sys.argv[1]))
    p.start()
    for i in range(3):
        q.put(i)
    q.join()  # HANG-HERE
    p.join()
    print("done", flush=True)
