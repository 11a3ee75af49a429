"""The non-daemon monitor of nondaemon_thread_at_exit, polling at exit a multiprocessing event a child process sets.

report: https://github.com/lincc-frameworks/hyrax/pull/1011
saw: the monitor "blocks the interpreter forever at shutdown" only when nothing will set its stop event.
mechanism: healthy: the same `while not stop.wait(1.0)` loop at exit, on an event shared with a child process that, alive, sets it when its upload ends: another process can set it (its futex is shared), so the loop has a way out.
expect: healthy
"""
import multiprocessing as mp
import threading

from _zoo import ready, seconds, set_after


def monitor(stop):
    while not stop.wait(1.0):  # the same loop as nondaemon_thread_at_exit's; the event is the child's to set
        pass


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    stop = ctx.Event()
    threading.Thread(target=monitor, args=(stop,), name="GpuMonitor").start()
    ctx.Process(target=set_after, args=(stop, seconds(30)), name="uploader").start()
    print("epoch 0", flush=True)
    ready()  # main returns: the exit joins the monitor until the child sets its stop
