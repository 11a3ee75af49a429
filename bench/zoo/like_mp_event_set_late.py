"""The same "started" event, set by a helper that takes a while to start, and does.

report: https://github.com/xolox/python-capturer/pull/12
saw: the wait ends as soon as the helper sets the event; the hang needs the helper dead.
mechanism: healthy: the parent waits on the shared event while the helper, alive, prepares (sleeping in pieces), then sets it.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def helper(started, s):
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:
        time.sleep(0.5)
    started.set()
    time.sleep(1)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    started = ctx.Event()
    ctx.Process(target=helper, args=(started, seconds(40)), name="capture-helper").start()
    ready()
    started.wait()
    print("helper started", flush=True)
