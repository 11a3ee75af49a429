"""The parent waits for a forked helper's "started" event; the helper died before setting it.

report: https://github.com/xolox/python-capturer/pull/12
saw: "If the forked process dies for some reason before started_event.set() is called the parent process will hang on started_event.wait()."
mechanism: a multiprocessing.Event is a shared semaphore and condition; its only setter has exited, so no process left can set it, and wait() has no timeout.
expect: hung code.deadlock
accept: process.waits_on, child.wait
"""
import multiprocessing as mp
import os

from _zoo import ready


def helper(started):
    os._exit(3)  # dies during its setup (a missing device, a bad config), before started.set()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    started = ctx.Event()
    ctx.Process(target=helper, args=(started,), name="capture-helper").start()
    ready()
    started.wait()  # HANG-HERE
    print("helper started", flush=True)
