"""The heartbeat of nondaemon_sleep_poller_at_exit, checking at exit a multiprocessing event a child process sets.

report: https://github.com/Lightning-AI/pytorch-lightning/issues/19203
saw: the heartbeat holds the exit only when nothing will set its stop flag.
mechanism: healthy: the same `while not stop.is_set(): time.sleep(1.0)` loop at exit, on an event shared with a child process that, alive, sets it when its upload ends: the thread sleeps between two reads of the flag, so the kernel cannot say whose event it is, and another process lives that may set it.
expect: healthy
"""
import multiprocessing as mp
import threading
import time

from _zoo import ready, seconds, set_after


def heartbeat(stop):
    while not stop.is_set():  # the same loop as nondaemon_sleep_poller_at_exit's; the child sets the event
        time.sleep(1.0)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    stop = ctx.Event()
    threading.Thread(target=heartbeat, args=(stop,), name="heartbeat").start()
    ctx.Process(target=set_after, args=(stop, seconds(30)), name="uploader").start()
    print("epoch 0", flush=True)
    ready()  # main returns: the exit joins the heartbeat until the child sets its stop
