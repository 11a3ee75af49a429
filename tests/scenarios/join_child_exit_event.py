"""The parent joins a child whose exit joins its own non-daemon thread, which waits on a multiprocessing Event that
only the parent sets, after that join: each waits for the other. `python join_child_exit_event.py hang`; `python
join_child_exit_event.py SECONDS`: the parent sets the event after SECONDS, before its join, and the job ends."""

import multiprocessing as mp
import sys
import threading
import time


def child(ev):
    threading.Thread(target=ev.wait, name="waiter").start()  # non-daemon: the child's exit joins it


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    ev = ctx.Event()
    p = ctx.Process(target=child, args=(ev,))
    p.start()
    if sys.argv[1] != "hang":
        time.sleep(float(sys.argv[1]))
        ev.set()
    p.join()  # HANG-HERE
    ev.set()
    print("done", flush=True)
